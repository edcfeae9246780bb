import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleProject, readmeOutput, type ExampleProject } from './example-project.js';

let example: ExampleProject;
beforeAll(() => {
  example = exampleProject('durable-approval');
});
afterAll(() => example?.remove());

describe('examples/durable-approval', () => {
  it('declares troupe, zod and better-sqlite3 (for troupe/sqlite)', () => {
    expect(example.manifest).toMatchObject({ private: true, type: 'module', scripts: { start: 'tsx main.ts' } });
    expect(example.manifest.dependencies.troupe).toBe('file:../..');
    expect(Object.keys(example.manifest.dependencies).sort()).toEqual(['better-sqlite3', 'troupe', 'zod']);
  });

  it('typechecks against the built package', async () => {
    expect(await example.typecheck()).toBe('');
  }, 60_000);

  it('npm start: SIGKILLed while waiting, decided from a second process, resumed in a third; each tool ran once', async () => {
    const output = await example.run('start');
    // What its README says it prints.
    expect(output.trimEnd()).toBe(readmeOutput('durable-approval').trimEnd());
    expect(output.split('\n')).toEqual([
      '$ tsx step-1-start.ts',
      'lookup_order: order A123: $60.00, paid by card',
      'waiting for approval refund-A123:2.0: refund {"orderId":"A123","cents":6000}',
      'status running; killing this process (SIGKILL)',
      '(exit: SIGKILL)',
      '',
      '$ tsx step-2-decide.ts',
      'pending approvals: refund-A123:2.0 (refund)',
      'alice approved refund-A123:2.0',
      '(exit: 0)',
      '',
      '$ tsx step-3-resume.ts',
      'refund: refunded 6000 cents on A123',
      'output: Done: refunded 6000 cents on A123.',
      'status completed after 3 turns',
      'ledger (one line per tool execution, in every process):',
      '  lookup_order A123 call c1 (ran in step-1-start)',
      '  refund A123 6000 cents call c2 (ran in step-3-resume)',
      '(exit: 0)',
      '',
      '',
    ]);
  }, 60_000);
});
