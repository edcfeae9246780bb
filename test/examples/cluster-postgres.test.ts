import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL, adminQuery } from '../store/harnesses.js';
import { exampleProject, readmeOutput, type ExampleProject } from './example-project.js';

let example: ExampleProject;
const schema = `example_cluster_${process.pid}`;
beforeAll(() => {
  example = exampleProject('cluster-postgres');
});
afterAll(async () => {
  example?.remove();
  await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
});

describe('examples/cluster-postgres', () => {
  it('declares troupe, zod and pg (for troupe/postgres)', () => {
    expect(example.manifest).toMatchObject({ private: true, type: 'module', scripts: { start: 'tsx main.ts' } });
    expect(example.manifest.dependencies.troupe).toBe('file:../..');
    expect(Object.keys(example.manifest.dependencies).sort()).toEqual(['pg', 'troupe', 'zod']);
  });

  it('typechecks against the built package', async () => {
    expect(await example.typecheck()).toBe('');
  }, 60_000);

  it('npm start: runs spread over two workers; worker A is SIGKILLed and B takes its runs over; every tool ran once', async () => {
    const output = await example.run('start', { DATABASE_URL: POSTGRES_URL!, TROUPE_SCHEMA: schema });
    // What its README says it prints.
    expect(output.trimEnd()).toBe(readmeOutput('cluster-postgres').trimEnd());
    expect(output.split('\n')).toEqual([
      'database migrated',
      'server node and worker A up',
      'order-1: packed order-1 on worker A; ship waits for approval',
      'order-2: packed order-2 on worker A; ship waits for approval',
      'worker B up',
      'order-3: packed order-3 on worker B; ship waits for approval',
      'order-4: packed order-4 on worker B; ship waits for approval',
      'order-3 completed: packed order-3 on worker B, shipped order-3 on worker B.',
      'order-4 completed: packed order-4 on worker B, shipped order-4 on worker B.',
      'worker A killed (SIGKILL) while order-1 and order-2 wait for approval',
      'order-1: worker B took over; ship waits for approval again',
      'order-2: worker B took over; ship waits for approval again',
      'order-1 completed: packed order-1 on worker A, shipped order-1 on worker B.',
      'order-2 completed: packed order-2 on worker A, shipped order-2 on worker B.',
      'tool executions (8, one per call):',
      '  pack order-1 A',
      '  pack order-2 A',
      '  pack order-3 B',
      '  pack order-4 B',
      '  ship order-1 B',
      '  ship order-2 B',
      '  ship order-3 B',
      '  ship order-4 B',
      'server node and worker B stopped',
      '',
    ]);
  }, 90_000);
});
