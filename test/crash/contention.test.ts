import { afterAll, describe, expect, it } from 'vitest';
import { entriesOf, killWhenStored, leaseExpired, load, marks, openGate, outcome, start, trace, workspace, type Finished, type FixtureConfig } from './crash-helpers.js';

const ws = workspace('contention');
afterAll(() => ws.cleanup());

/** Of two processes, the one that ends first (the loser of the lease) and the other. */
async function firstToEnd(a: ReturnType<typeof start>, b: ReturnType<typeof start>): Promise<{ loser: Finished; winner: ReturnType<typeof start> }> {
  const loser = await Promise.race([a.done, b.done]);
  return { loser, winner: loser.pid === a.pid ? b : a };
}

function expectLocked(loser: Finished, runId: string, winnerPid: number): void {
  expect(loser.code).toBe(3);
  expect(outcome(loser).error).toMatchObject({ name: 'RunLocked', code: 'RUN_LOCKED' });
  expect(outcome(loser).error!.message).toMatch(new RegExp(`^Run '${runId}' is locked by 'pid ${winnerPid} on [^']+ #[^']+' until \\S+; nothing was written\\.`));
  // Refused before anything else: the stream is run_started, run_failed and no checkpoint was saved.
  expect(loser.lines.filter((l) => l.event).map((l) => l.event!.type)).toEqual(['run_started', 'run_failed']);
}

describe('several processes on one run (real processes, real SQLite)', { timeout: 90_000 }, () => {
  it('two processes resume one crashed run at once: one gets RunLocked and writes nothing, each tool runs once, the log replays', async () => {
    const runId = 'race';
    const base: FixtureConfig = { scenario: 'batch', calls: 2, phase: 'first', mode: 'start', db: ws.file('race.sqlite'), marks: ws.file('race.marks'), runId };
    const first = start({ ...base, hang: ['c2'] });
    await killWhenStored(first, base.db, runId, ['input', 'reply:1', 'result:c1']);
    await leaseExpired(base.db, runId);

    // Both start in the same tick; the winner's tool waits at the gate, so it still holds the run when the other claims.
    // Their own leases are long: on a loaded machine a 300 ms lease could lapse between renewals and be taken over.
    const gate = ws.file('race.gate');
    const startAt = Date.now() + 2500;
    const a = start({ ...base, phase: 'resume-a', mode: 'resume', gate, startAt, leaseMs: 10_000 });
    const b = start({ ...base, phase: 'resume-b', mode: 'resume', gate, startAt, leaseMs: 10_000 });
    const { loser, winner } = await firstToEnd(a, b);
    expectLocked(loser, runId, winner.pid);
    expect(entriesOf(base.db, runId)).toEqual(['input', 'reply:1', 'result:c1']);
    openGate(gate);
    const won = await winner.done;
    expect(won.code).toBe(0);
    expect(outcome(won).result).toEqual({ output: 'all calls done', turns: 2 });

    const winnerPhase = winner === a ? 'resume-a' : 'resume-b';
    expect(marks(base.marks)).toEqual(['first c1', 'first c2', `${winnerPhase} c2`]);
    expect(entriesOf(base.db, runId)).toEqual(['input', 'reply:1', 'result:c1', 'result:c2', 'turn_end:1', 'reply:2', 'turn_end:2']);

    // A third resume replays the completed run: no model call, no tool.
    const replay = await start({ ...base, phase: 'replay', mode: 'resume' }).done;
    expect(replay.code).toBe(0);
    expect(trace(replay.lines)).toEqual(['run_started', 'run_completed']);
    expect(outcome(replay)).toMatchObject({ result: { output: 'all calls done', turns: 2 }, requests: { batcher: [] } });
    expect(marks(base.marks)).toHaveLength(3);
    expect(load(base.db, runId)!.head).toMatchObject({ status: 'completed', output: 'all calls done' });
  });

  it('same-tick ifRunExists:"fail" starts in two processes: exactly one runs, the other gets RunLocked', async () => {
    const runId = 'twins';
    const gate = ws.file('twins.gate');
    const base: FixtureConfig = { scenario: 'batch', calls: 1, phase: 'first', mode: 'start', ifRunExists: 'fail', db: ws.file('twins.sqlite'), marks: ws.file('twins.marks'), runId, gate, leaseMs: 10_000 };
    const startAt = Date.now() + 2500;
    const a = start({ ...base, phase: 'first-a', startAt });
    const b = start({ ...base, phase: 'first-b', startAt });
    const { loser, winner } = await firstToEnd(a, b);
    expectLocked(loser, runId, winner.pid);
    openGate(gate);
    const won = await winner.done;
    expect(outcome(won).result).toEqual({ output: 'all calls done', turns: 2 });
    expect(marks(base.marks)).toEqual([`${winner === a ? 'first-a' : 'first-b'} c1`]);
    expect(entriesOf(base.db, runId)).toEqual(['input', 'reply:1', 'result:c1', 'turn_end:1', 'reply:2', 'turn_end:2']);
  });
});
