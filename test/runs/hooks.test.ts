import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemorySession, Runner, tool, type Message, type Model, type RunEvent } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { GuardrailTripped, HookError, OutputValidationError } from '../../src/errors.js';
import { collect, completed, deferred, flush, trace } from '../helpers.js';

const echo = tool({ name: 'echo', description: 'd', parameters: z.object({ v: z.string() }), execute: ({ v }) => `echo ${v}` });

describe('beforeModelCall', () => {
  it('changes only the view the model gets; the transcript stays whole', async () => {
    const model = new ScriptedModel([call('echo', { v: 'a' }, 'c1'), text('done')]);
    const agent = new Agent({
      name: 'a', model, tools: [echo], instructions: 'base',
      hooks: [
        { beforeModelCall: (req) => ({ system: `${req.system} +one` }) },
        { beforeModelCall: (req) => ({ system: `${req.system} +two`, messages: req.messages.slice(-1) }) },
      ],
    });
    const result = await Runner.run(agent, 'q');
    expect(model.requests.map((r) => r.system)).toEqual(['base +one +two', 'base +one +two']);
    expect(model.requests[1]!.messages.map((m) => m.role)).toEqual(['tool']);
    expect(result.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('gets a copy it may change freely: mutating it in place changes neither the transcript, the session nor the next request', async () => {
    const model = new ScriptedModel([call('echo', { v: 'a' }, 'c1'), text('done')]);
    const seen: string[][] = [];
    const agent = new Agent({
      name: 'a', model, tools: [echo],
      hooks: {
        // Plain JavaScript, ignoring the readonly types: empties the array and rewrites what was in it.
        beforeModelCall: (req, ctx) => {
          seen.push(req.messages.map((m) => m.content));
          const messages = req.messages as Message[];
          (messages[0] as { content: string }).content = 'rewritten';
          (ctx.transcript as Message[]).length = 0;
          messages.splice(0, messages.length, { role: 'user', content: 'only this' });
        },
      },
    });
    const session = new MemorySession();
    const result = await Runner.run(agent, 'q', { session: { store: session, id: 's1' } });
    expect(seen).toEqual([['q'], ['q', '', 'echo a']]);
    expect(model.requests.map((r) => r.messages.map((m) => m.content))).toEqual([['only this'], ['only this']]);
    expect(result.transcript.map((m) => [m.role, m.content])).toEqual([['user', 'q'], ['assistant', ''], ['tool', 'echo a'], ['assistant', 'done']]);
    expect((await session.history('s1')).map((m) => m.content)).toEqual(['q', '', 'echo a', 'done']);
  });

  it('a throwing beforeModelCall fails the run with HookError and asks no model', async () => {
    const model = new ScriptedModel([text('never')]);
    const agent = new Agent({ name: 'a', model, hooks: { beforeModelCall: () => { throw new Error('redactor down'); } } });
    const events = await collect(Runner.stream(agent, 'q'));
    const failed = events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>;
    expect(failed.error).toBeInstanceOf(HookError);
    expect(failed.error.message).toBe('beforeModelCall hook failed: redactor down');
    expect(model.requests).toHaveLength(0);
  });
});

describe('afterModelResponse', () => {
  it('retry discards the reply (output_discarded) and counts a turn against maxTurns', async () => {
    let seen = 0;
    const model = new ScriptedModel([text('bad'), text('good')]);
    const agent = new Agent({ name: 'a', model, hooks: { afterModelResponse: (reply) => (++seen === 1 ? { retry: true } : undefined) } });
    const events = await collect(Runner.stream(agent, 'q'));
    expect(trace(events)).toEqual(['run_started', 'turn_started', 'output_discarded', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(model.requests[1]!.messages.map((m) => m.content)).toEqual(['q']);
    const end = events.at(-1) as Extract<RunEvent, { type: 'run_completed' }>;
    expect([end.output, end.turns, end.usage.requests]).toEqual(['good', 2, 2]);
    const limited = new Agent({ name: 'a', model: new ScriptedModel([text('bad'), text('bad')]), hooks: { afterModelResponse: () => ({ retry: true }) } });
    await expect(Runner.run(limited, 'q', { maxTurns: 2 })).rejects.toThrow('max turns 2 exceeded');
  });

  it('stop keeps the reply text as the output; its calls get a result without running', async () => {
    const model = new ScriptedModel([call('echo', { v: 'x' }, 'c1', { text: 'final words' })]);
    const agent = new Agent({ name: 'a', model, tools: [echo], hooks: { afterModelResponse: () => ({ stop: true }) } });
    const events = await collect(Runner.stream(agent, 'q'));
    expect(trace(events)).toEqual(['run_started', 'turn_started', 'message_completed', 'tool_call_completed:c1', 'turn_ended', 'run_completed']);
    expect(completed(events)[0]!.output).toBe('Tool error: not executed: afterModelResponse ended the run');
    expect((events.at(-1) as Extract<RunEvent, { type: 'run_completed' }>).output).toBe('final words');
  });

  it('inject adds user messages the model sees next; a text-only reply then continues', async () => {
    let turn = 0;
    const model = new ScriptedModel([text('draft'), text('final')]);
    const agent = new Agent({ name: 'a', model, hooks: { afterModelResponse: () => (++turn === 1 ? { inject: ['cite a source'] } : undefined) } });
    const events = await collect(Runner.stream(agent, 'q'));
    expect(events.filter((e) => e.type === 'user_message_injected').map((e) => e.type === 'user_message_injected' && [e.turn, e.source, e.message.content])).toEqual([[2, 'hook', 'cite a source']]);
    expect(model.requests[1]!.messages.map((m) => m.content)).toEqual(['q', 'draft', 'cite a source']);
    expect((events.at(-1) as Extract<RunEvent, { type: 'run_completed' }>).output).toBe('final');
  });
});

describe('tool hooks', () => {
  it('beforeToolCall blocks one call of a parallel batch: error result with blockedBy, no execution; the others run', async () => {
    const ran: string[] = [];
    const t = tool({ name: 't', description: 'd', parameters: z.object({ v: z.string() }), execute: ({ v }) => void ran.push(v) });
    const model = new ScriptedModel([batch([['t', { v: 'a' }, 'c1'], ['t', { v: 'rm -rf' }, 'c2'], ['t', { v: 'b' }, 'c3']]), text('ok')]);
    const agent = new Agent({ name: 'a', model, tools: [t], hooks: { beforeToolCall: ({ args }) => ((args as { v: string }).v.startsWith('rm') ? { block: 'destructive command' } : undefined) } });
    const events = await collect(Runner.stream(agent, 'q'));
    expect(ran.sort()).toEqual(['a', 'b']);
    expect(events.filter((e) => e.type === 'tool_call_started').map((e) => 'call' in e && e.call.id)).toEqual(['c1', 'c3']);
    const blocked = completed(events).find((e) => e.call.id === 'c2')!;
    expect([blocked.isError, blocked.output, blocked.blockedBy]).toEqual([true, 'Tool error: blocked: destructive command', 'destructive command']);
  });

  it('a throwing beforeToolCall gives the call an error result (tool_call_failed first); the run goes on', async () => {
    const agent = new Agent({ name: 'a', model: new ScriptedModel([call('echo', { v: 'x' }, 'c1'), text('ok')]), tools: [echo], hooks: { beforeToolCall: () => { throw new Error('policy service down'); } } });
    const events = await collect(Runner.stream(agent, 'q'));
    expect(trace(events).filter((t) => t.includes(':'))).toEqual(['tool_call_failed:c1', 'tool_call_completed:c1']);
    expect(completed(events)[0]!.output).toBe('Tool error: beforeToolCall hook failed: policy service down');
    expect(events.at(-1)!.type).toBe('run_completed');
  });

  it('afterToolCall reshapes what the model sees; a throwing one makes it an error result', async () => {
    const model = new ScriptedModel([batch([['echo', { v: 'secret' }, 'c1'], ['echo', { v: 'boom' }, 'c2']]), text('ok')]);
    const agent = new Agent({
      name: 'a', model, tools: [echo],
      hooks: { afterToolCall: (_call, result) => { if (result.output.includes('boom')) throw new Error('scanner crashed'); return { output: result.output.replace('secret', '[redacted]') }; } },
    });
    const events = await collect(Runner.stream(agent, 'q'));
    expect(completed(events).map((e) => [e.call.id, e.output, e.isError]).sort()).toEqual([
      ['c1', 'echo [redacted]', false],
      ['c2', 'Tool error: afterToolCall hook failed: scanner crashed', true],
    ]);
  });
});

describe('onRunEnd', () => {
  it('returning messages continues the run; returning nothing lets it complete', async () => {
    let ends = 0;
    const model = new ScriptedModel([text('first'), text('second')]);
    const agent = new Agent({ name: 'a', model, hooks: { onRunEnd: ({ output }) => (++ends === 1 ? [`you said ${output}; check it`] : undefined) } });
    const result = await Runner.run(agent, 'q');
    expect([result.output, result.turns, ends]).toEqual(['second', 2, 2]);
    expect(model.requests[1]!.messages.at(-1)).toEqual({ role: 'user', content: 'you said first; check it' });
  });

  it('a throwing onRunEnd fails the run with HookError', async () => {
    const agent = new Agent({ name: 'a', model: new ScriptedModel([text('x')]), hooks: { onRunEnd: () => { throw new Error('audit log full'); } } });
    await expect(Runner.run(agent, 'q')).rejects.toThrow('onRunEnd hook failed: audit log full');
  });
});

describe('structured output', () => {
  const Weather = z.object({ city: z.string(), celsius: z.number() });

  it('parses and validates the final reply into finalOutput, with tools in the same run', async () => {
    const script = new ScriptedModel([call('echo', { v: 'Rome' }, 'c1'), text('{"city":"Rome","celsius":24}')]);
    const formats: unknown[] = [];
    const model: Model = { name: 'capturing', stream: (request) => (formats.push(request.responseFormat), script.stream(request)) };
    const result = await Runner.run(new Agent({ name: 'a', model, tools: [echo], outputType: Weather }), 'weather?');
    expect(result.finalOutput).toEqual({ city: 'Rome', celsius: 24 });
    // A model without supportsResponseFormat is also told the schema in the system prompt.
    expect(script.requests[0]!.system).toBe('Reply with only JSON that matches this JSON Schema:\n' + JSON.stringify(z.toJSONSchema(Weather)));
    expect(formats).toEqual([{ type: 'json', schema: z.toJSONSchema(Weather), name: 'output' }, { type: 'json', schema: z.toJSONSchema(Weather), name: 'output' }]);
  });

  it('an invalid final reply gets one repair turn with the validation message', async () => {
    const model = new ScriptedModel([text('{"city":"Rome"}'), text('```json\n{"city":"Rome","celsius":24}\n```')]);
    const handle = Runner.stream(new Agent({ name: 'a', model, outputType: Weather }), 'weather?');
    const events = await collect(handle);
    const repair = events.find((e) => e.type === 'user_message_injected') as Extract<RunEvent, { type: 'user_message_injected' }>;
    expect([repair.turn, repair.source, repair.message.content]).toEqual([
      2,
      'repair',
      'Your last reply was not valid: the reply does not match the output schema: celsius: Invalid input: expected number, received undefined. Reply again with only the JSON value, matching the required schema.',
    ]);
    expect((await handle.result()).finalOutput).toEqual({ city: 'Rome', celsius: 24 });
  });

  it('a second invalid reply fails the run with OutputValidationError', async () => {
    const model = new ScriptedModel([text('not json'), text('still not')]);
    const run = Runner.run(new Agent({ name: 'a', model, outputType: Weather }), 'weather?');
    await expect(run).rejects.toBeInstanceOf(OutputValidationError);
    await expect(Runner.run(new Agent({ name: 'a', model: new ScriptedModel([text('not json'), text('still not')]), outputType: Weather }), 'q')).rejects.toThrow(
      "final output invalid after one repair turn: the reply is not valid JSON (Unexpected token 's', \"still not\" is not valid JSON)",
    );
  });
});

describe('guardrails', () => {
  it('an input guardrail runs beside the first model call; its tripwire aborts it and ends the run', async () => {
    const gate = deferred<void>();
    let aborted = false;
    const model = {
      name: 'slow',
      async *stream(request: { signal: AbortSignal }) {
        request.signal.addEventListener('abort', () => (aborted = true));
        await new Promise((_, reject) => request.signal.addEventListener('abort', () => reject(new Error('aborted'))));
        yield { type: 'text_delta' as const, delta: 'never' };
      },
    };
    const agent = new Agent({ name: 'a', model, inputGuardrails: [async function noPii(messages) { await gate.promise; return { tripwire: messages.some((m) => m.content.includes('SSN')), info: { found: 'SSN' } }; }] });
    const handle = Runner.stream(agent, 'my SSN is 123');
    const reading = collect(handle);
    await flush();
    gate.resolve();
    const events = await reading;
    const failed = events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>;
    expect(failed.error).toBeInstanceOf(GuardrailTripped);
    expect([failed.error.message, (failed.error as GuardrailTripped).info]).toEqual(["input guardrail 'noPii' tripped", { found: 'SSN' }]);
    expect(aborted).toBe(true);
  });

  it('an input guardrail tripping while tools run ends the run; every call gets exactly one result', async () => {
    const gate = deferred<void>();
    let toolAborted = false;
    const slow = tool({ name: 'slow', description: 'd', parameters: z.object({}), execute: (_a, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => { toolAborted = true; resolve('late'); })) });
    const model = new ScriptedModel([batch([['slow', {}, 's1'], ['echo', { v: 'x' }, 'e1']]), text('never')]);
    const agent = new Agent({ name: 'a', model, tools: [slow, echo], inputGuardrails: [async function policy() { await gate.promise; return { tripwire: true, info: 'late verdict' }; }] });
    const handle = Runner.stream(agent, 'q');
    const reading = collect(handle);
    await flush();
    gate.resolve();
    const events = await reading;
    expect(completed(events).map((e) => [e.call.id, e.output])).toEqual([
      ['e1', 'echo x'],
      ['s1', "Tool error: not executed: input guardrail 'policy' tripped"],
    ]);
    expect(toolAborted).toBe(true);
    const failed = events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>;
    expect([failed.error.name, (failed.error as GuardrailTripped).info]).toEqual(['GuardrailTripped', 'late verdict']);
    expect(model.requests).toHaveLength(1);
  });

  it('a run cannot complete before its input guardrails pass', async () => {
    const gate = deferred<void>();
    const agent = new Agent({ name: 'a', model: new ScriptedModel([text('quick answer')]), inputGuardrails: [async () => { await gate.promise; return { tripwire: false }; }] });
    const handle = Runner.stream(agent, 'q');
    const reading = collect(handle);
    await flush();
    expect(JSON.stringify(handle.actor.getSnapshot().value)).toBe('"ending"');
    gate.resolve();
    const events = await reading;
    expect(events.at(-1)).toMatchObject({ type: 'run_completed', output: 'quick answer' });
  });

  it('an output guardrail checks the final output before the run completes', async () => {
    const agent = new Agent({ name: 'a', model: new ScriptedModel([text('the password is hunter2')]), outputGuardrails: [function noSecrets(output) { return { tripwire: String(output).includes('password') }; }] });
    await expect(Runner.run(agent, 'q')).rejects.toThrow("output guardrail 'noSecrets' tripped");
    const fine = new Agent({ name: 'a', model: new ScriptedModel([text('all good')]), outputGuardrails: [() => ({ tripwire: false })] });
    expect((await Runner.run(fine, 'q')).output).toBe('all good');
  });
});
