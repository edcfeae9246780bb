import { afterAll, describe, expect, it } from 'vitest';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';
import { hashArguments } from '../../src/runtime/args-hash.js';
import { entriesOf, killWhenStored, load, marks, outcome, run, start, trace, until, workspace, type FixtureConfig } from './crash-helpers.js';

/**
 * Security: an approval decided with edited arguments is durable and bound. The model asks to
 * run `rm -rf /`; the approver approves it edited to `ls`. Whatever point the process dies at
 * between the decision and the call's result, the resumed run runs `ls` (or nothing more),
 * never the model's command, and never without the decision.
 */
const ws = workspace('edited');
afterAll(() => ws.cleanup());

const EDITS = { cmd: 'ls' };
const DECIDED = 'approval_decision:x1:approved:{"cmd":"ls"}';

const config = (name: string, extra: Partial<FixtureConfig> = {}): FixtureConfig => ({
  scenario: 'edited',
  phase: 'first',
  mode: 'start',
  db: ws.file(`${name}.sqlite`),
  marks: ws.file(`${name}.marks`),
  runId: name,
  ...extra,
});

/** Resumes the killed run in a fresh process; it must complete. */
async function resume(base: FixtureConfig, phase = 'resume') {
  const resumed = await run({ ...base, phase, mode: 'resume', hang: [], claimWaitMs: 10_000 });
  expect(resumed.code, resumed.stderr).toBe(0);
  expect(outcome(resumed).result).toEqual({ output: 'shell handled', turns: 2 });
  return resumed;
}

/** The request the resumed model saw: the call's result is what `ls` gave. */
function lastRequest(finished: Awaited<ReturnType<typeof run>>): readonly string[] {
  const requests = outcome(finished).requests!.operator!;
  return requests[requests.length - 1]!.messages;
}

describe('an approval with edited arguments survives a crash at every point before its result (real processes, SIGKILL)', { timeout: 90_000 }, () => {
  it('decided, then held for a free slot (not started): the resumed run runs the edited command', async () => {
    const base = config('held', { editedOrder: 'work-first', maxConcurrentToolCalls: 1, hang: ['w1'], approveWith: EDITS });
    const first = start(base);
    await until(first, 'w1 running', () => marks(base.marks).includes('first w1'));
    await killWhenStored(first, base.db, base.runId, ['input', 'reply:1', 'approval_request:x1', DECIDED]);
    expect(marks(base.marks)).toEqual(['first w1']);
    const decision = load(base.db, base.runId)!.entries[3]!;
    expect(decision).toMatchObject({ kind: 'approval_decision', approved: true, by: 'consumer', editedArguments: '{"cmd":"ls"}', editedArgsHash: hashArguments('{"cmd":"ls"}') });

    const resumed = await resume(base);
    expect(marks(base.marks)).toEqual(['first w1', 'resume w1', 'resume x1 ls']);
    expect(trace(resumed.lines)).not.toContain('approval_required:x1');
    expect(lastRequest(resumed)).toEqual(['user:go', 'assistant:', 'tool:w1:work w1 done', 'tool:x1:ran ls']);
  });

  it('decided, the edited call running: the resumed run runs the edited command again, never the original', async () => {
    const base = config('running', { hang: ['x1'], approveWith: EDITS });
    const first = start(base);
    await until(first, 'x1 running', () => marks(base.marks).includes('first x1 ls'));
    await killWhenStored(first, base.db, base.runId, ['input', 'reply:1', 'approval_request:x1', DECIDED]);

    const resumed = await resume(base);
    expect(marks(base.marks)).toEqual(['first x1 ls', 'resume x1 ls']);
    expect(trace(resumed.lines)).toEqual(['run_started', 'turn_started', 'tool_call_started:x1', 'tool_call_completed:x1', 'turn_ended', 'turn_started', 'message_completed', 'turn_ended', 'run_completed']);
    expect(lastRequest(resumed)).toEqual(['user:go', 'assistant:', 'tool:x1:ran ls']);
  });

  it('the edited call finished and its result is stored: the resumed run does not run it again', async () => {
    const base = config('result', { editedOrder: 'shell-first', hang: ['w1'], approveWith: EDITS });
    const first = start(base);
    await killWhenStored(first, base.db, base.runId, ['input', 'reply:1', 'approval_request:x1', DECIDED, 'result:x1']);
    expect(marks(base.marks)).toEqual(['first x1 ls', 'first w1']);

    const resumed = await resume(base);
    expect(marks(base.marks)).toEqual(['first x1 ls', 'first w1', 'resume w1']);
    expect(lastRequest(resumed)).toEqual(['user:go', 'assistant:', 'tool:x1:ran ls', 'tool:w1:work w1 done']);
  });

  it('Runner.decide from another process with edited args: the resumed run runs them; killed while running, resumed again, still them', async () => {
    const base = config('decided-elsewhere');
    const parked = await run({ ...base, suspendOnWait: true });
    expect(outcome(parked).suspended!.map((a) => a.callId)).toEqual(['x1']);
    const decided = await run({ ...base, phase: 'decide', mode: 'decide', approvalId: `${base.runId}:1.0`, decision: { approved: true, by: 'alice', args: EDITS } });
    expect(decided.code, decided.stderr).toBe(0);
    expect(outcome(decided).decided).toMatchObject({ approved: true, by: 'alice', editedArguments: '{"cmd":"ls"}' });

    const crashing = start({ ...base, phase: 'resume-1', mode: 'resume', hang: ['x1'], claimWaitMs: 10_000 });
    await until(crashing, 'x1 running', () => marks(base.marks).includes('resume-1 x1 ls'));
    const killed = await crashing.kill();
    expect(killed.code).toBe(null);

    await resume(base, 'resume-2');
    expect(marks(base.marks)).toEqual(['resume-1 x1 ls', 'resume-2 x1 ls']);
    expect(entriesOf(base.db, base.runId)).toEqual(['input', 'reply:1', 'approval_request:x1', 'approval_decision:x1:approved:{"cmd":"ls"}', 'result:x1', 'turn_end:1', 'reply:2', 'turn_end:2']);
  });

  it('edits changed in the store (hash no longer matches): the decision is not applied, the call is asked again and nothing runs', async () => {
    const base = config('tampered');
    await run({ ...base, suspendOnWait: true });
    const store = new SqliteCheckpointStore(base.db);
    const saved = store.load(base.runId)!;
    const forged = { kind: 'approval_decision' as const, approvalId: `${base.runId}:1.0`, callId: 'x1', argsHash: hashArguments('{"cmd":"rm -rf /"}'), approved: true, editedArguments: '{"cmd":"rm -rf /home"}', editedArgsHash: hashArguments('{"cmd":"ls"}'), by: 'mallory', decidedAt: Date.now() };
    store.append(base.runId, [forged], saved.head);
    store.close();

    const again = await run({ ...base, phase: 'resume', mode: 'resume', suspendOnWait: true });
    expect(again.code, again.stderr).toBe(0);
    expect(trace(again.lines)).toEqual(['run_started', 'turn_started', 'approval_required:x1', 'run_suspended']);
    expect(marks(base.marks)).toEqual([]);
  });
});
