import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';

/**
 * The run chart as the rows docs/architecture.md ("The chart") writes it: for every state
 * node, in the chart's order, its entry and exit actions and each transition (event, guard,
 * target, actions) in the order XState tries them. Read from `machine.root` (XSTATE-NOTES:
 * `toJSON()` drops `always` transitions), so the doc is compared with the chart itself.
 */
export interface StateRows {
  /** The state node id: `run.turn.turnEnd`. */
  readonly id: string;
  readonly entry: readonly string[];
  readonly exit: readonly string[];
  /** The id of the actor it invokes (its completions are `xstate.done.actor.<id>` rows), if any. */
  readonly invokes: readonly string[];
  readonly rows: readonly TransitionRow[];
}

export interface TransitionRow {
  /** The event type; `always` for an eventless transition. */
  readonly on: string;
  /** The named guard, or `—`. */
  readonly guard: string;
  /** Target state ids (`run.turn (re-enter)` for a re-entering one), or `—` (stays). */
  readonly to: string;
  /** Action names in order, or `—`. */
  readonly actions: string;
}

const nameOf = (ref: unknown): string =>
  typeof ref === 'string' ? ref : typeof ref === 'object' && ref !== null && typeof (ref as { type?: unknown }).type === 'string' ? (ref as { type: string }).type : '(inline)';

const names = (list: readonly unknown[] | undefined): string[] => (list ?? []).map(nameOf);

function row(t: AnyTransitionDefinition): TransitionRow {
  const targets = (t.target ?? []).map((s: AnyStateNode) => s.id);
  const actions = names(t.actions as unknown[]);
  return {
    on: t.eventType === '' ? 'always' : t.eventType,
    guard: t.guard === undefined ? '—' : nameOf(t.guard),
    to: targets.length ? targets.join(', ') + (t.reenter ? ' (re-enter)' : '') : '—',
    actions: actions.length ? actions.join(', ') : '—',
  };
}

export function chartRows(machine: AnyStateMachine): StateRows[] {
  const out: StateRows[] = [];
  const visit = (node: AnyStateNode): void => {
    const rows = [...[...node.transitions.values()].flat(), ...(node.always ?? [])].map(row);
    out.push({ id: node.id, entry: names(node.entry), exit: names(node.exit), invokes: node.invoke.map((i: { id: string }) => i.id), rows });
    for (const child of Object.values(node.states) as AnyStateNode[]) visit(child);
  };
  visit(machine.root);
  return out;
}

/** One state's rows as the doc's markdown table (names in backticks). */
export function markdownTable(state: StateRows): string {
  const code = (cell: string): string => (cell === '—' ? cell : cell.split(', ').map((part) => part.replace(/^(\S+)/, '`$1`')).join(', '));
  const lines = ['| on | guard | to | actions |', '|---|---|---|---|'];
  for (const r of state.rows) lines.push(`| ${code(r.on)} | ${code(r.guard)} | ${code(r.to)} | ${code(r.actions)} |`);
  return lines.join('\n');
}
