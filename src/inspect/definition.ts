import type { WireStateNode, WireTransition } from './wire.js';

/**
 * Walks a machine from `machine.root` into a JSON definition. `machine.toJSON()` and
 * `toDirectedGraph` drop eventless (`always`) transitions and inline actions, which are
 * most of the run chart, so we read the state nodes directly.
 */

/** The parts of an XState StateNode this walk reads (kept structural: internals vary by version). */
interface StateNodeLike {
  readonly id: string;
  readonly key: string;
  readonly type: WireStateNode['type'];
  readonly states: Record<string, StateNodeLike>;
  readonly tags?: readonly string[];
  readonly entry?: readonly unknown[];
  readonly exit?: readonly unknown[];
  readonly transitions?: Map<string, readonly TransitionLike[]>;
  readonly always?: readonly TransitionLike[];
  readonly invoke?: ReadonlyArray<{ id?: string; src?: unknown }>;
  readonly initial?: { target?: readonly StateNodeLike[] };
}

interface TransitionLike {
  readonly eventType: string;
  readonly target?: readonly StateNodeLike[] | undefined;
  readonly guard?: unknown;
  readonly actions?: readonly unknown[];
  readonly reenter?: boolean;
}

export interface MachineLike {
  readonly id: string;
  readonly root: unknown;
}

export function isMachineLogic(logic: unknown): logic is MachineLike {
  return typeof logic === 'object' && logic !== null && 'root' in logic && typeof (logic as { id?: unknown }).id === 'string' && 'getStateNodeById' in logic;
}

export function walkMachine(machine: MachineLike): WireStateNode {
  return walkNode(machine.root as StateNodeLike);
}

function walkNode(node: StateNodeLike): WireStateNode {
  const transitions: WireTransition[] = [];
  for (const [event, list] of node.transitions ?? []) {
    for (const t of list) transitions.push(transition(t, event, kindOf(event)));
  }
  for (const t of node.always ?? []) transitions.push(transition(t, '', 'always'));
  const initialTarget = node.type === 'compound' ? node.initial?.target?.[0]?.id : undefined;
  return {
    id: node.id,
    key: node.key,
    type: node.type,
    ...(initialTarget ? { initial: initialTarget } : {}),
    tags: [...(node.tags ?? [])],
    entry: (node.entry ?? []).map(actionName),
    exit: (node.exit ?? []).map(actionName),
    invoke: (node.invoke ?? []).map((inv) => ({ id: String(inv.id ?? ''), src: typeof inv.src === 'string' ? inv.src : 'inline' })),
    transitions,
    states: Object.values(node.states ?? {}).map(walkNode),
  };
}

function transition(t: TransitionLike, event: string, kind: WireTransition['kind']): WireTransition {
  const guard = t.guard === undefined ? undefined : guardName(t.guard);
  return {
    event,
    kind,
    targets: (t.target ?? []).map((s) => s.id),
    ...(guard !== undefined ? { guard } : {}),
    actions: (t.actions ?? []).map(actionName),
    reenter: t.reenter === true,
  };
}

function kindOf(event: string): WireTransition['kind'] {
  if (event.startsWith('xstate.done.')) return 'done';
  if (event.startsWith('xstate.error.')) return 'error';
  if (event.startsWith('xstate.after.')) return 'after';
  return 'on';
}

function guardName(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'function') return guard.name || 'inline';
  if (typeof guard === 'object' && guard !== null && typeof (guard as { type?: unknown }).type === 'string') return (guard as { type: string }).type;
  return 'inline';
}

function actionName(action: unknown): string {
  if (typeof action === 'string') return action;
  if (typeof action === 'function') {
    const type = (action as { type?: unknown }).type;
    if (typeof type === 'string') return type;
    return action.name || 'inline';
  }
  if (typeof action === 'object' && action !== null && typeof (action as { type?: unknown }).type === 'string') return (action as { type: string }).type;
  return 'inline';
}

/**
 * Active state node ids (ancestors included, document order) for a state value, e.g.
 * `{ turn: { executing: 'preflight' } }` → `run, run.turn, run.turn.executing, run.turn.executing.preflight`.
 */
export function activeStateIds(machine: MachineLike, value: unknown): string[] {
  const out: string[] = [];
  const visit = (node: StateNodeLike, v: unknown): void => {
    out.push(node.id);
    if (typeof v === 'string') {
      const child = node.states?.[v];
      if (child) out.push(child.id);
      return;
    }
    if (typeof v === 'object' && v !== null) {
      for (const [key, sub] of Object.entries(v)) {
        const child = node.states?.[key];
        if (child) visit(child, sub);
      }
    }
  };
  visit(machine.root as StateNodeLike, value);
  return out;
}
