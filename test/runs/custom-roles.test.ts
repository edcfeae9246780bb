/**
 * Custom message roles in the context (issue 29, item 8; CubePi's and pi-agent-core's custom
 * messages with transformContext / convertToModel): messages of roles the model does not know
 * live in the transcript, the log and the session; each model request is made from the
 * transcript by transformContext, then convertToModel (default: drop them), view only.
 */
import { describe, expect, it } from 'vitest';
import { Agent, HookError, MemoryCheckpointStore, MemorySession, Runner, customMessage, type Message, type RunEvent } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { UIMessageChunkMapper } from '../../src/server/ui-chunks.js';
import { collect, trace } from '../helpers.js';
import { bigTool, compactions, pagesScript } from '../context/fixtures.js';

// The app's roles, by declaration merging (as an application would write `declare module 'troupe'`).
declare module '../../src/types.js' {
  interface CustomMessageRoles {
    note: true;
    ui_event: true;
  }
}

const note = (content: string, data?: unknown) => customMessage('note', content, data);
const roles = (messages: readonly Message[]) => messages.map((m) => m.role);
/** Every request a model got holds only the roles models know. */
const onlyModelRoles = (model: ScriptedModel) => model.requests.flatMap((r) => r.messages).filter((m) => !['user', 'assistant', 'tool'].includes(m.role));

describe('custom message roles', () => {
  it('live in the transcript, the log and the session; the default convertToModel drops them from every request', async () => {
    const store = new MemoryCheckpointStore();
    const session = new MemorySession();
    const model = new ScriptedModel([call('echo_nothing', {}, 'c1'), text('first')]);
    const input = [{ role: 'user', content: 'hi' }, { role: 'note', content: 'the user is on the free plan', data: { plan: 'free' } }] as const;
    const result = await Runner.run(new Agent({ name: 'a', model }), input as never, { checkpoint: { store, runId: 'n1' }, session: { store: session, id: 's' } });
    expect(roles(result.transcript)).toEqual(['user', 'note', 'assistant', 'tool', 'assistant']);
    expect(result.transcript[1]).toEqual({ role: 'note', content: 'the user is on the free plan', data: { plan: 'free' } });
    expect(model.requests.map((r) => roles(r.messages))).toEqual([['user'], ['user', 'assistant', 'tool']]);
    expect(store.load('n1')!.entries.slice(0, 2)).toEqual([
      { kind: 'input', message: { role: 'user', content: 'hi' } },
      { kind: 'input', message: { role: 'note', content: 'the user is on the free plan', data: { plan: 'free' } } },
    ]);
    // The next run of the session starts from the stored history, the note included; the model still never sees it.
    const next = new ScriptedModel([text('second')]);
    const again = await Runner.run(new Agent({ name: 'a', model: next }), 'and now?', { session: { store: session, id: 's' } });
    expect(roles(again.transcript)).toEqual(['user', 'note', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
    expect(roles(next.requests[0]!.messages)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    // A resumed durable run restores it from the log.
    const replayed = await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([]) }), input as never, { checkpoint: { store, runId: 'n1' } });
    expect(roles(replayed.transcript)).toEqual(['user', 'note', 'assistant', 'tool', 'assistant']);
  });

  it('transformContext, then convertToModel, make each request (sync or async); the transcript never changes', async () => {
    const seen: string[] = [];
    const model = new ScriptedModel([text('ok')]);
    const agent = new Agent({
      name: 'a',
      model,
      hooks: [
        {
          // Async; edits its copy in place and returns nothing: the next step sees the edit.
          transformContext: async (messages) => {
            seen.push(`transform1:${roles(messages).join(',')}`);
            (messages[0] as { content: string }).content = 'HI';
          },
        },
        { transformContext: (messages) => (seen.push(`transform2:${roles(messages).join(',')}`), [...messages, note('added by transformContext')]) },
        {
          convertToModel: async (messages) => {
            seen.push(`convert:${roles(messages).join(',')}`);
            return messages.map((m) => (m.role === 'user' || m.role === 'assistant' || m.role === 'tool' ? m : { role: 'user' as const, content: `[${m.role}] ${m.content}` }));
          },
        },
      ],
    });
    const result = await Runner.run(agent, [{ role: 'user', content: 'hi' }, { role: 'note', content: 'remember me' }] as never);
    expect(seen).toEqual(['transform1:user,note', 'transform2:user,note', 'convert:user,note,note']);
    expect(model.requests[0]!.messages).toEqual([
      { role: 'user', content: 'HI' },
      { role: 'user', content: '[note] remember me' },
      { role: 'user', content: '[note] added by transformContext' },
    ]);
    expect(result.transcript.slice(0, 2)).toEqual([{ role: 'user', content: 'hi' }, { role: 'note', content: 'remember me' }]);
  });

  it('a convertToModel that leaves a custom role, or a throwing transformContext, fails the run with a HookError', async () => {
    const run = (hooks: object) => Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('never')]), hooks }), [{ role: 'user', content: 'hi' }, { role: 'note', content: 'n' }] as never).catch((e: unknown) => e);
    const left = await run({ convertToModel: (messages: readonly Message[]) => messages });
    expect(left).toBeInstanceOf(HookError);
    expect((left as Error).message).toBe('convertToModel hook failed: convertToModel returned message 2 with role "note"; the model is sent only user, assistant and tool messages.');
    const thrown = await run({ transformContext: () => { throw new Error('no context today'); } });
    expect((thrown as Error).message).toBe('transformContext hook failed: no context today');
  });

  it('steered custom messages join the transcript at the next request, are announced, and reach a UI stream as data parts', async () => {
    const model = new ScriptedModel([text('ok')]);
    const handle = Runner.stream(new Agent({ name: 'a', model }), 'hi', { runId: 'u1' });
    const id = handle.steer(customMessage('ui_event', 'clicked Buy', { button: 'buy' }));
    const events = await collect(handle);
    expect(trace(events)).toEqual(['run_started', 'turn_started', 'user_message_injected', 'message_completed', 'turn_ended', 'run_completed']);
    const injected = events.find((e) => e.type === 'user_message_injected') as Extract<RunEvent, { type: 'user_message_injected' }>;
    expect(injected).toMatchObject({ source: 'steer', id, message: { role: 'ui_event', content: 'clicked Buy', data: { button: 'buy' } } });
    expect(roles(model.requests[0]!.messages)).toEqual(['user']);
    const chunks = new UIMessageChunkMapper('u1', { dataEvents: 'none' }).map(JSON.parse(JSON.stringify(injected)));
    expect(chunks).toContainEqual({ type: 'data-troupe-message', data: { runId: 'u1', turn: 1, role: 'ui_event', content: 'clicked Buy', data: { button: 'buy' } } });
    expect(() => handle.steer({ role: 'user', content: 'x' } as never)).toThrow("steer: 'user' is a role the model knows, not a custom one.");
  });

  it('context compaction works with them: with notes between the messages, the requests and compactions are those of the run without', async () => {
    const policy = { maxInputTokens: 3_000, offload: { previewChars: 40 } };
    const plainModel = pagesScript(5);
    const plain = await collect(Runner.stream(new Agent({ name: 'reader', model: plainModel, tools: [bigTool(5_000)], contextPolicy: policy }), 'read', { runId: 'r1' }));
    const notedModel = pagesScript(5);
    const agent = new Agent({ name: 'reader', model: notedModel, tools: [bigTool(5_000)], contextPolicy: policy, hooks: { afterToolCall: () => undefined } });
    const handle = Runner.stream(agent, [{ role: 'user', content: 'read' }, { role: 'note', content: 'x'.repeat(20_000) }] as never, { runId: 'r1' });
    handle.steer(note('a long note the model never sees '.repeat(500)));
    const noted = await collect(handle);
    expect(compactions(noted)).toEqual(compactions(plain));
    expect(compactions(noted).length).toBe(2);
    expect(notedModel.requests.map((r) => r.messages)).toEqual(plainModel.requests.map((r) => r.messages));
    expect(onlyModelRoles(notedModel)).toEqual([]);
  });
  it("a plugin's transformContext and convertToModel shape the view like the agent's own; the transcript keeps its messages", async () => {
    const model = new ScriptedModel([text('ok')]);
    const plugin = {
      name: 'reminder',
      setup: () => ({
        hooks: [
          {
            transformContext: (messages: readonly Message[]) => [...messages, { role: 'user' as const, content: 'reminder from the plugin' }],
            convertToModel: (messages: readonly Message[]) => messages.filter((m) => m.role === 'user' || m.role === 'assistant' || m.role === 'tool'),
          },
        ],
      }),
    };
    const result = await Runner.run(new Agent({ name: 'a', model, plugins: [plugin] }), 'hello');
    expect(result.output).toBe('ok');
    expect(model.requests[0]!.messages.map((m) => m.content)).toEqual(['hello', 'reminder from the plugin']);
  });
});
