/**
 * Human-in-the-loop forms (issue 29, item 7; CubePi's HITL): several keyed questions in one ask
 * (answers by key, options and multi-select as arrays, null cancels one question), a tool
 * asking from inside its body (confirm and ask) through the run's question wait, the answer
 * ledger (answers given to a parked run applied once, to the ask they answer, when the tool
 * runs again on resume), and aborting a parked run with a reason.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  Agent,
  MemoryCheckpointStore,
  Runner,
  UserError,
  askFormFromTool,
  askFromTool,
  askHuman,
  confirmFromTool,
  tool,
  type RunContext,
  type RunEvent,
} from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { collect, completed, trace } from '../helpers.js';

const quiet = (events: readonly RunEvent[]) => trace(events, ['text_delta', 'checkpoint_saved']);
const requestIds = (events: readonly RunEvent[]) => events.flatMap((e) => (e.type === 'human_request' ? [`ask:${e.requestId}`] : e.type === 'human_answer' ? [`answer:${e.requestId}`] : []));

const tripForm = [
  { key: 'city', question: 'Which city?', options: ['Rome', 'Paris'] },
  { key: 'days', question: 'Which days?', options: ['Sat', 'Sun', 'Mon'], multiSelect: true },
  { key: 'note', question: 'Anything else?' },
];

describe('a form: several keyed questions in one ask', () => {
  it('askHuman with questions: human_request carries the form; answers by key are checked; null cancels one question', async () => {
    const model = new ScriptedModel([call('ask_human', { question: 'Trip', questions: tripForm }, 'h1'), text('booked')]);
    const handle = Runner.stream(new Agent({ name: 'planner', model, tools: [askHuman()] }), 'plan', { runId: 'r' });
    const events = await collect(handle, (e) => {
      if (e.type !== 'human_request') return;
      expect(e.form).toEqual([
        { key: 'city', question: 'Which city?', options: ['Rome', 'Paris'], multiSelect: false },
        { key: 'days', question: 'Which days?', options: ['Sat', 'Sun', 'Mon'], multiSelect: true },
        { key: 'note', question: 'Anything else?', multiSelect: false },
      ]);
      expect(handle.humans.pending()[0]!.form!.map((q) => q.key)).toEqual(['city', 'days', 'note']);
      expect(() => handle.humans.answer('r:1.0', 'Rome')).toThrow("The answer to the form 'Trip' must be an object by key (city, days, note); null cancels one question.");
      expect(() => handle.humans.answer('r:1.0', { city: 'Oslo' })).toThrow("'Oslo' is not an option of 'Which city?'; options: Rome, Paris.");
      expect(() => handle.humans.answer('r:1.0', { town: 'Rome' })).toThrow("The form 'Trip' has no question 'town'; keys: city, days, note.");
      expect(() => handle.humans.answer('r:1.0', { days: 'Sat' })).toThrow("The answer to 'Which days?' must be an array of its options (multi-select).");
      expect(handle.humans.pending()).toHaveLength(1);
      expect(handle.humans.answer('r:1.0', { city: 'Rome', days: ['Sun', 'Sat'], note: null })).toBe(true);
    });
    expect(quiet(events)).toEqual([
      'run_started', 'turn_started', 'message_completed', 'tool_call_started:h1', 'human_request:h1', 'human_answer:h1', 'tool_call_completed:h1',
      'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed',
    ]);
    expect((events.find((e) => e.type === 'human_answer') as Extract<RunEvent, { type: 'human_answer' }>).answer).toEqual({ city: 'Rome', days: ['Sun', 'Sat'], note: null });
    expect(completed(events)[0]!.output).toBe('{"city":"Rome","days":["Sun","Sat"],"note":null}');
  });

  it("a model's form with a repeated key is the call's error result, not a failed run", async () => {
    const questions = [{ key: 'a', question: 'One?' }, { key: 'a', question: 'Two?' }];
    const model = new ScriptedModel([call('ask_human', { question: 'Bad', questions }, 'h1'), text('ok')]);
    const events = await collect(Runner.stream(new Agent({ name: 'planner', model, tools: [askHuman()] }), 'plan'));
    expect(completed(events)[0]).toMatchObject({ isError: true, output: "Tool error: ask_human: form question 2 repeats the key 'a'; keys must be unique in a form." });
    expect(events.at(-1)!.type).toBe('run_completed');
  });

  it('a channel gets the form and its answer is checked by key', async () => {
    const seen: unknown[] = [];
    const channel = (question: string, _ctx: unknown, choices: { form?: readonly { key: string }[] }) => {
      seen.push([question, choices.form?.map((q) => q.key)]);
      return { city: 'Paris', days: [], note: 'window seat' };
    };
    const model = new ScriptedModel([call('ask_human', { question: 'Trip', questions: tripForm }, 'h1'), text('ok')]);
    const events = await collect(Runner.stream(new Agent({ name: 'planner', model, tools: [askHuman(channel)] }), 'plan'));
    expect(seen).toEqual([['Trip', ['city', 'days', 'note']]]);
    expect(completed(events)[0]!.output).toBe('{"city":"Paris","days":[],"note":"window seat"}');
  });
});

/** A tool that confirms, then asks a form, from its body; `ran` counts executions, `booked` the side effect after both answers. */
function bookTool(ran: string[], booked: unknown[]) {
  return tool({
    name: 'book',
    description: 'Books a trip after asking.',
    parameters: z.object({}),
    execute: async (_args, ctx) => {
      ran.push(ctx.callId);
      if (!(await confirmFromTool(ctx, 'Book a trip?'))) return 'not booked';
      const answers = await askFormFromTool(ctx, 'Trip', tripForm);
      booked.push(answers);
      return `booked ${String(answers['city'])}`;
    },
  });
}

describe('asking from inside a tool body', () => {
  it('confirm, then a form: each ask is a question wait of the call with its own id; the body goes on with the answers', async () => {
    const ran: string[] = [];
    const booked: unknown[] = [];
    const model = new ScriptedModel([call('book', {}, 'b1'), text('done')]);
    const handle = Runner.stream(new Agent({ name: 'agent', model, tools: [bookTool(ran, booked)] }), 'go', { runId: 'r' });
    const events = await collect(handle, (e) => {
      if (e.type !== 'human_request') return;
      if (e.requestId === 'r:1.0:ask.0') {
        expect([e.question, e.options, e.multiSelect]).toEqual(['Book a trip?', ['yes', 'no'], false]);
        expect(handle.humans.answer(e.requestId, 'yes')).toBe(true);
      } else handle.humans.answer(e.requestId, { city: 'Rome', days: ['Sat'] });
    });
    expect(quiet(events)).toEqual([
      'run_started', 'turn_started', 'message_completed', 'tool_call_started:b1',
      'human_request:b1', 'human_answer:b1', 'human_request:b1', 'human_answer:b1', 'tool_call_completed:b1',
      'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed',
    ]);
    expect(requestIds(events)).toEqual(['ask:r:1.0:ask.0', 'answer:r:1.0:ask.0', 'ask:r:1.0:ask.1', 'answer:r:1.0:ask.1']);
    expect(completed(events)[0]).toMatchObject({ output: 'booked Rome', isError: false });
    expect(booked).toEqual([{ city: 'Rome', days: ['Sat'], note: null }]);
    expect(ran).toEqual(['b1']);
  });

  it('"no" ends the body early; an ask that times out rejects with WaitTimeout; asking outside a run is a UserError', async () => {
    const slow = tool({ name: 'slow', description: 'd', parameters: z.object({}), execute: async (_a, ctx) => askFromTool(ctx, 'Quick?', { timeoutMs: 10 }) });
    const model = new ScriptedModel([batch([['book', {}, 'b1']]), call('slow', {}, 's1'), text('ok')]);
    const handle = Runner.stream(new Agent({ name: 'agent', model, tools: [bookTool([], []), slow] }), 'go', { runId: 'r' });
    const events = await collect(handle, (e) => {
      if (e.type === 'human_request' && e.requestId === 'r:1.0:ask.0') handle.humans.answer(e.requestId, 'no');
    });
    expect(completed(events).map((e) => [e.call.id, e.output])).toEqual([
      ['b1', 'not booked'],
      ['s1', "Tool error: no answer to 'Quick?' within 10 ms"],
    ]);
    const handMade = { signal: new AbortController().signal } as unknown as RunContext;
    expect(() => askFromTool(handMade, 'Hi?')).toThrow(new UserError("askFromTool can only run inside a troupe run, in a tool's execute."));
    expect(() => askFormFromTool(handMade, 'T', [])).toThrow('askFormFromTool: a form needs at least one question.');
    expect(() => askFromTool(handMade, 'Hi?', { options: ['a'] })).toThrow("askFromTool: form question 1 ('answer') has options that are not at least two distinct non-empty strings.");
  });
});

describe('the answer ledger: answers given to a parked run are applied once', () => {
  it('parks at each ask; Runner.answer records it; on resume the tool runs again and each answered ask gets its stored answer without asking', async () => {
    const store = new MemoryCheckpointStore();
    const ran: string[] = [];
    const booked: unknown[] = [];
    const agent = (model: ScriptedModel) => new Agent({ name: 'agent', model, tools: [bookTool(ran, booked)] });
    const checkpoint = { store, runId: 'L', suspendOnWait: true };

    const first = await collect(Runner.stream(agent(new ScriptedModel([call('book', {}, 'b1')])), 'go', { checkpoint }));
    expect(quiet(first)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_started:b1', 'human_request:b1', 'run_suspended']);
    expect((first.at(-1) as Extract<RunEvent, { type: 'run_suspended' }>).waits.map((w) => [w.waitId, w.kind])).toEqual([['L:1.0:ask.0', 'question']]);
    expect(await Runner.answer(store, 'L', 'L:1.0:ask.0', 'yes', 'alice')).toMatchObject({ waitId: 'L:1.0:ask.0', resolution: 'yes', by: 'alice' });
    await expect(Runner.answer(store, 'L', 'L:1.0:ask.0', 'no')).rejects.toThrow("Run 'L' has no open question 'L:1.0:ask.0' (it is unknown, already answered, or its call finished).");

    // Resumed: the body runs again; its first ask takes the stored "yes" at once and the form parks the run again.
    const second = await collect(Runner.resume(agent(new ScriptedModel([])), checkpoint));
    expect(requestIds(second)).toEqual(['answer:L:1.0:ask.0', 'ask:L:1.0:ask.1']);
    expect(second.at(-1)!.type).toBe('run_suspended');
    await Runner.answer(store, 'L', 'L:1.0:ask.1', { city: 'Paris', note: 'aisle' });

    const model = new ScriptedModel([text('booked it')]);
    const third = await collect(Runner.resume(agent(model), checkpoint));
    expect(requestIds(third)).toEqual(['answer:L:1.0:ask.0', 'answer:L:1.0:ask.1']);
    expect(third.at(-1)).toMatchObject({ type: 'run_completed', output: 'booked it' });
    expect(ran).toEqual(['b1', 'b1', 'b1']);
    expect(booked).toEqual([{ city: 'Paris', days: null, note: 'aisle' }]);
    expect(model.requests[0]!.messages.at(-1)).toMatchObject({ role: 'tool', callId: 'b1', content: 'booked Paris' });
    // One request and one resolution per ask, however often the tool ran.
    expect(store.load('L')!.entries.map((e) => (e.kind === 'wait_request' || e.kind === 'wait_resolution' ? `${e.kind}:${e.waitId}` : e.kind))).toEqual([
      'input', 'reply', 'wait_request:L:1.0:ask.0', 'wait_resolution:L:1.0:ask.0', 'wait_request:L:1.0:ask.1', 'wait_resolution:L:1.0:ask.1', 'result', 'turn_end', 'reply', 'turn_end',
    ]);
  });
});

describe('aborting a parked run', () => {
  it('closes every open call with "Conversation aborted: <reason>", stores the final assistant message and the abort entry; a resume is refused', async () => {
    const store = new MemoryCheckpointStore();
    const done = tool({ name: 'done', description: 'd', parameters: z.object({}), execute: () => 'fine' });
    const agent = (model: ScriptedModel) => new Agent({ name: 'agent', model, tools: [askHuman(), bookTool([], []), done] });
    const model = new ScriptedModel([batch([['ask_human', { question: 'Why?' }, 'h1'], ['book', {}, 'b1'], ['done', {}, 'd1']])]);
    const parked = await collect(Runner.stream(agent(model), 'go', { checkpoint: { store, runId: 'A', suspendOnWait: true } }));
    expect(parked.at(-1)!.type).toBe('run_suspended');

    await expect(Runner.abort(store, 'A', '')).rejects.toThrow('Runner.abort needs a reason (a non-empty string), got "".');
    await expect(Runner.abort(store, 'nope', 'x')).rejects.toThrow("Run 'nope' is not in the checkpoint store.");
    const written = await Runner.abort(store, 'A', 'the user left', 'support');
    // ask_human is a barrier: the question waits alone; the calls after it never started. Each gets the same result.
    expect(written.map((e) => e.kind)).toEqual(['result', 'result', 'result', 'turn_end', 'reply', 'turn_end', 'abort']);
    expect(written.slice(0, 3).map((e) => (e.kind === 'result' ? [e.message.role === 'tool' && e.message.callId, e.message.content] : []))).toEqual([
      ['h1', 'Conversation aborted: the user left'],
      ['b1', 'Conversation aborted: the user left'],
      ['d1', 'Conversation aborted: the user left'],
    ]);
    expect(written[4]).toEqual({ kind: 'reply', turn: 2, message: { role: 'assistant', content: 'Conversation aborted: the user left', toolCalls: [], agent: 'agent' } });
    expect(written[6]).toMatchObject({ kind: 'abort', turn: 2, reason: 'the user left', by: 'support' });
    const stored = store.load('A')!;
    expect(stored.head).toMatchObject({ status: 'cancelled', turn: 2, error: { name: 'RunCancelled', message: 'Conversation aborted: the user left' } });
    // Every call of the turn has exactly one result.
    expect(stored.entries.filter((e) => e.kind === 'result')).toHaveLength(3);

    await expect(Runner.resume(agent(new ScriptedModel([])), { store, runId: 'A' }).result()).rejects.toThrow("Cannot resume run 'A': it was aborted (Conversation aborted: the user left).");
    await expect(Runner.abort(store, 'A', 'again')).rejects.toThrow("Run 'A' has already ended (cancelled); only a parked or stopped run can be aborted.");
    expect(store.load('A')!.entries).toHaveLength(stored.entries.length);
  });
});
