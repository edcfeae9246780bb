import { describe, expect, it } from 'vitest';
import { collapseInactive } from '../../src/inspect/chart-collapse.js';
import { walkMachine } from '../../src/inspect/definition.js';
import type { WireStateNode } from '../../src/inspect/wire.js';
import { getRunMachine } from '../../src/runtime/run-machine.js';

const ids = (node: WireStateNode): string[] => [node.id, ...node.states.flatMap(ids)];

describe('statechart: collapse inactive regions', () => {
  const root = walkMachine(getRunMachine());

  it('while the model replies, executing and stopping are single boxes; the active path stays open', () => {
    const collapsed = collapseInactive(root, new Set(['run', 'run.turn', 'run.turn.model']));
    const shown = ids(collapsed);
    expect(shown).toContain('run.turn.model');
    expect(shown).toContain('run.turn.executing');
    expect(shown).not.toContain('run.turn.executing.preflight');
    expect(shown).not.toContain('run.stopping.checkpoint');
    const executing = collapsed.states.find((s) => s.key === 'turn')!.states.find((s) => s.key === 'executing')!;
    expect(executing.type).toBe('atomic');
    expect(executing.tags).toContain('collapsed:8');
    // The region's way out is lifted to its box: draining → turnEnd, preflight.stop → stopping.
    const targets = executing.transitions.flatMap((t) => t.targets);
    expect(targets).toEqual(expect.arrayContaining(['run.turn.turnEnd', 'run.stopping']));
    expect(targets).not.toContain('run.turn.executing');
    // Every edge target of the collapsed chart is a state that is drawn.
    const all = new Set(shown);
    const walk = (node: WireStateNode): string[] => [...node.transitions.flatMap((t) => t.targets), ...node.states.flatMap(walk)];
    for (const target of walk(collapsed)) expect(all.has(target), target).toBe(true);
  });

  it('with the whole path active nothing on it is collapsed', () => {
    const active = new Set(['run', 'run.turn', 'run.turn.executing', 'run.turn.executing.barrier', 'run.turn.executing.barrier.runningAlone']);
    expect(ids(collapseInactive(root, active))).toEqual(expect.arrayContaining([...active]));
  });
});
