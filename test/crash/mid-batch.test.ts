import { afterAll, describe, expect, it } from 'vitest';
import { entriesOf, killWhenStored, load, marks, outcome, run, start, trace, workspace, type FixtureConfig } from './crash-helpers.js';

const ws = workspace('batch');
afterAll(() => ws.cleanup());

const ALL = ['c1', 'c2', 'c3', 'c4', 'c5'];

/** Five parallel calls; the ones not in `finished` hang in the first process, which is killed once the finished results are stored. */
async function crashMidBatch(name: string, finished: readonly string[]) {
  const base: FixtureConfig = { scenario: 'batch', phase: 'first', mode: 'start', db: ws.file(`${name}.sqlite`), marks: ws.file(`${name}.marks`), runId: name };
  const hang = ALL.filter((id) => !finished.includes(id));
  const first = start({ ...base, hang });
  await killWhenStored(first, base.db, name, ['input', 'reply:1', ...finished.map((id) => `result:${id}`)]);
  const stored = load(base.db, name)!;
  expect(stored.head.status).toBe('running');
  // Every call started in the first process.
  expect([...marks(base.marks)].sort()).toEqual(ALL.map((id) => `first ${id}`));

  const resumed = await run({ ...base, phase: 'resume', mode: 'resume', claimWaitMs: 10_000 });
  expect(resumed.code).toBe(0);
  expect(outcome(resumed).result).toEqual({ output: 'all calls done', turns: 2 });
  // Only the unfinished calls ran again; their results follow the stored ones.
  expect(trace(resumed.lines)).toEqual([
    'run_started',
    'turn_started',
    ...hang.map((id) => `tool_call_started:${id}`),
    ...hang.map((id) => `tool_call_completed:${id}`),
    'turn_ended',
    'turn_started',
    'message_completed',
    'turn_ended',
    'run_completed',
  ]);
  const afterResume = marks(base.marks);
  expect(afterResume.slice(ALL.length)).toEqual(hang.map((id) => `resume ${id}`));
  for (const id of finished) expect(afterResume.filter((m) => m.endsWith(` ${id}`))).toEqual([`first ${id}`]);
  // The model saw every result once, the stored ones first.
  expect(outcome(resumed).requests!.batcher).toEqual([
    { agent: 'batcher', system: '', messages: ['user:go', 'assistant:', ...[...finished, ...hang].map((id) => `tool:${id}:work ${id} done`)] },
  ]);
  expect(entriesOf(base.db, name)).toEqual(['input', 'reply:1', ...[...finished, ...hang].map((id) => `result:${id}`), 'turn_end:1', 'reply:2', 'turn_end:2']);
  const final = load(base.db, name)!;
  expect(final.head).toMatchObject({ status: 'completed', output: 'all calls done', turn: 2, agent: 'batcher' });
  expect(final.entries.slice(0, stored.entries.length)).toEqual(stored.entries);
  // The lease was given back.
  expect(final.lease).toBeUndefined();
}

describe('crash mid-batch (5 parallel calls, real process, SIGKILL)', { timeout: 90_000 }, () => {
  it('killed after 1 result is stored: resume runs only the other 4, each finished tool ran once', async () => {
    await crashMidBatch('after-one', ['c1']);
  });

  it('killed after 3 results are stored: resume runs only the other 2, each finished tool ran once', async () => {
    await crashMidBatch('after-three', ['c1', 'c3', 'c5']);
  });
});
