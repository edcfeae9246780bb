import { afterAll, describe, expect, it } from 'vitest';
import { entriesOf, killWhenStored, load, marks, outcome, run, start, trace, until, workspace, type FixtureConfig, type Scenario } from './crash-helpers.js';

const ws = workspace('points');
afterAll(() => ws.cleanup());

const config = (scenario: Scenario, name: string): FixtureConfig => ({ scenario, phase: 'first', mode: 'start', db: ws.file(`${name}.sqlite`), marks: ws.file(`${name}.marks`), runId: name });
const resume = (base: FixtureConfig) => run({ ...base, phase: 'resume', mode: 'resume', claimWaitMs: 10_000 });

describe('crash at other points of a run, then resume (real processes, SIGKILL)', { timeout: 90_000 }, () => {
  it('mid model stream: the unstored reply is asked for again, once; no duplicate reply entry', async () => {
    const base = config('stream', 'stream');
    const first = start(base);
    await until(first, 'three text deltas', () => first.lines.filter((l) => l.event?.type === 'text_delta').length === 3);
    await killWhenStored(first, base.db, base.runId, ['input']);
    expect(first.lines.filter((l) => l.event?.type === 'text_delta').map((l) => l.event!.delta)).toEqual(['Once ', 'upon ', 'a ']);

    const resumed = await resume(base);
    expect(outcome(resumed).result).toEqual({ output: 'Once upon a time.', turns: 1 });
    expect(trace(resumed.lines)).toEqual(['run_started', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(outcome(resumed).requests!.teller).toEqual([{ agent: 'teller', system: '', messages: ['user:go'] }]);
    expect(entriesOf(base.db, base.runId)).toEqual(['input', 'reply:1', 'turn_end:1']);
  });

  it('inside a sub-run: the parent resumes the sub-run from its own log, its finished tool is not re-run', async () => {
    const base = config('subrun', 'boss');
    const sub = 'boss/1.0';
    const first = start({ ...base, hang: ['h2'] });
    await until(first, 'the parent log', () => JSON.stringify(entriesOf(base.db, base.runId)) === JSON.stringify(['input', 'reply:1', `subrun_start:a1:${sub}`]));
    await killWhenStored(first, base.db, sub, ['input', 'reply:1', 'result:h1']);
    expect([...marks(base.marks)].sort()).toEqual(['first h1', 'first h2']);

    const resumed = await resume(base);
    expect(outcome(resumed).result).toEqual({ output: 'boss finished', turns: 2 });
    expect(marks(base.marks).slice(2)).toEqual(['resume h2']);
    expect(trace(resumed.lines, sub)).toEqual(['run_started', 'turn_started', 'tool_call_started:h2', 'tool_call_completed:h2', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    // The helper saw both results; the boss saw the helper's answer.
    expect(outcome(resumed).requests!.helper!.map((r) => r.messages)).toEqual([['user:do both', 'assistant:', 'tool:h1:work h1 done', 'tool:h2:work h2 done']]);
    expect(outcome(resumed).requests!.boss!.map((r) => r.messages)).toEqual([['user:go', 'assistant:', 'tool:a1:helper finished']]);
    expect(entriesOf(base.db, sub)).toEqual(['input', 'reply:1', 'result:h1', 'result:h2', 'turn_end:1', 'reply:2', 'turn_end:2']);
    expect(entriesOf(base.db, base.runId)).toEqual([
      'input',
      'reply:1',
      `subrun_start:a1:${sub}`,
      `subrun_start:a1:${sub}`,
      `subrun_end:a1:${sub}:completed`,
      'result:a1',
      'turn_end:1',
      'reply:2',
      'turn_end:2',
    ]);
    expect(load(base.db, sub)!.head).toMatchObject({ status: 'completed', output: 'helper finished' });
    expect(load(base.db, base.runId)!.head).toMatchObject({ status: 'completed', output: 'boss finished' });
  });

  it('right after a handoff: resume continues on the new agent, with its system prompt', async () => {
    const base = config('handoff', 'handoff');
    const first = start(base);
    await killWhenStored(first, base.db, base.runId, ['input', 'reply:1', 'result:x1', 'turn_end:1', 'handoff:front>back']);
    expect(load(base.db, base.runId)!.head).toMatchObject({ agent: 'back', status: 'running' });

    const resumed = await resume(base);
    expect(outcome(resumed).result).toEqual({ output: 'back office here', turns: 2 });
    expect(outcome(resumed).requests!.front).toEqual([]);
    expect(outcome(resumed).requests!.back!.map((r) => [r.agent, r.system])).toEqual([['back', 'You are the back office.']]);
    expect(entriesOf(base.db, base.runId)).toEqual(['input', 'reply:1', 'result:x1', 'turn_end:1', 'handoff:front>back', 'reply:2', 'turn_end:2']);
    expect(load(base.db, base.runId)!.head).toMatchObject({ agent: 'back', status: 'completed' });
  });

  it('after all terminating results are stored: resume completes without calling the model', async () => {
    const base = config('terminate', 'terminate');
    const first = start(base);
    await killWhenStored(first, base.db, base.runId, ['input', 'reply:1', 'result:t1:terminate', 'result:t2:terminate', 'turn_end:1']);
    expect(marks(base.marks)).toEqual(['first t1', 'first t2']);

    // The resumed model has no steps: a model call would fail the run with ScriptExhausted.
    const resumed = await resume(base);
    expect(resumed.code).toBe(0);
    expect(outcome(resumed).requests!.closer).toEqual([]);
    expect(marks(base.marks)).toEqual(['first t1', 'first t2']);
    expect(entriesOf(base.db, base.runId)).toEqual(['input', 'reply:1', 'result:t1:terminate', 'result:t2:terminate', 'turn_end:1']);
    expect(load(base.db, base.runId)!.head).toMatchObject({ status: 'completed', turn: 1 });
    expect(outcome(resumed).result).toEqual({ output: load(base.db, base.runId)!.head.output, turns: 1 });
  });
});
