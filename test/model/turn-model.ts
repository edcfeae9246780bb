import { assign, setup, type SnapshotFrom } from 'xstate';
import { createTestModel, type StatePath } from 'xstate/graph';

/**
 * An abstract, actor-free model of the run rules for ONE turn's batch of tool calls
 * (docs/architecture.md, "Preflight"): serial preflight in request order, approval wait,
 * barrier (a parallel:false call waits for every in-flight call, runs alone, then
 * preflight continues), dispatch of parallel calls, draining.
 *
 * The model is a specification, not a copy of src/machines/run.machine.ts: it only knows
 * the batch and per-call statuses. Preflight is modelled with eventless transitions
 * because the runtime runs it synchronously: nothing outside the run can interleave
 * between two preflight steps, so there is no external PREFLIGHT_NEXT to drive. The only
 * external events are the ones a test can cause: START (the run begins, the model
 * replies with the batch), APPROVE_<id>/DENY_<id> (a consumer decision) and SETTLE_<id>
 * (a tool body returns).
 */

export interface CallSpec {
  /** Call id as the model sends it; also names the events of the call. */
  readonly id: string;
  /** needsApproval: true. */
  readonly gated: boolean;
  /** parallel: false — or a handoff tool, which is always a barrier whatever its `parallel`. */
  readonly barrier: boolean;
  /** Built as a handoff-style tool (`parallel: true` but marked as a handoff): only the handoff rule makes it a barrier. */
  readonly handoff?: boolean;
}

/**
 * pending: not reached by preflight yet (or waiting to run alone at a barrier),
 * awaiting: approval asked, approved: approved barrier waiting for in-flight calls,
 * running: dispatched and not settled, done: settled with its result, denied: its
 * approval was denied (error result, never ran).
 */
export type CallStatus = 'pending' | 'awaiting' | 'approved' | 'running' | 'done' | 'denied';

export interface TurnContext {
  readonly calls: readonly CallSpec[];
  readonly status: readonly CallStatus[];
  /** Index of the next call preflight looks at. */
  readonly cursor: number;
}

export type TurnEvent =
  | { type: 'START' }
  | { type: `SETTLE_${string}` }
  | { type: `APPROVE_${string}` }
  | { type: `DENY_${string}` };

const withStatus = (context: TurnContext, index: number, status: CallStatus): CallStatus[] =>
  context.status.map((s, i) => (i === index ? status : s));

const current = (context: TurnContext): CallSpec | undefined => context.calls[context.cursor];
const nothingRunning = (context: TurnContext): boolean => !context.status.includes('running');

export function createTurnModelMachine(calls: readonly CallSpec[]) {
  const ids = calls.map((c) => c.id);
  if (new Set(ids).size !== ids.length) throw new Error('call ids must be unique');

  // Settling is possible in every state while the call runs (e.g. during an approval wait).
  const settleHandlers = Object.fromEntries(
    calls.map((c, index) => [
      `SETTLE_${c.id}`,
      {
        guard: ({ context }: { context: TurnContext }) => context.status[index] === 'running',
        actions: 'settle' as const,
      },
    ]),
  );

  const approvalHandlers = Object.fromEntries(
    calls.flatMap((c, index) => {
      if (!c.gated) return [];
      const isCurrent = ({ context }: { context: TurnContext }) => context.cursor === index && context.status[index] === 'awaiting';
      return [
        [
          `APPROVE_${c.id}`,
          c.barrier
            ? { guard: isCurrent, target: '#turn.barrier', actions: 'markApproved' as const }
            : { guard: isCurrent, target: '#turn.preflight', actions: 'dispatchCurrent' as const },
        ],
        [`DENY_${c.id}`, { guard: isCurrent, target: '#turn.preflight', actions: 'denyCurrent' as const }],
      ];
    }),
  );

  return setup({
    types: {} as { context: TurnContext; events: TurnEvent },
    actions: {
      settle: assign({ status: ({ context, event }) => withStatus(context, ids.indexOf(event.type.slice('SETTLE_'.length)), 'done') }),
      dispatchCurrent: assign({ status: ({ context }) => withStatus(context, context.cursor, 'running'), cursor: ({ context }) => context.cursor + 1 }),
      markAwaiting: assign({ status: ({ context }) => withStatus(context, context.cursor, 'awaiting') }),
      markApproved: assign({ status: ({ context }) => withStatus(context, context.cursor, 'approved') }),
      denyCurrent: assign({ status: ({ context }) => withStatus(context, context.cursor, 'denied'), cursor: ({ context }) => context.cursor + 1 }),
    },
    guards: {
      batchChecked: ({ context }) => context.cursor >= context.calls.length,
      needsApproval: ({ context }) => current(context)?.gated === true && context.status[context.cursor] === 'pending',
      mustRunAlone: ({ context }) => current(context)?.barrier === true,
      nothingRunning: ({ context }) => nothingRunning(context),
    },
  }).createMachine({
    id: 'turn',
    context: { calls, status: calls.map(() => 'pending' as const), cursor: 0 },
    initial: 'idle',
    on: settleHandlers,
    states: {
      idle: { on: { START: 'preflight' } },
      // Serial, request order, one call at a time; halts for an approval or a barrier.
      preflight: {
        always: [
          { guard: 'batchChecked', target: 'draining' },
          { guard: 'needsApproval', target: 'approvalWait', actions: 'markAwaiting' },
          { guard: 'mustRunAlone', target: 'barrier' },
          // A parallel call is dispatched at once and preflight moves on.
          // (Eventless transitions are re-evaluated until none applies: this loops over the batch.)
          { actions: 'dispatchCurrent' },
        ],
      },
      approvalWait: { on: approvalHandlers },
      barrier: {
        initial: 'waitingForInFlight',
        states: {
          waitingForInFlight: { always: { guard: 'nothingRunning', target: 'runningAlone', actions: 'dispatchCurrent' } },
          runningAlone: { always: { guard: 'nothingRunning', target: '#turn.preflight' } },
        },
      },
      draining: { always: { guard: 'nothingRunning', target: 'done' } },
      // The turn's results are complete; the run asks the model again and completes.
      done: { type: 'final' },
    },
  });
}

export type TurnMachine = ReturnType<typeof createTurnModelMachine>;
export type TurnSnapshot = SnapshotFrom<TurnMachine>;
export type TurnPath = StatePath<TurnSnapshot, TurnEvent>;

/** Every event the test can cause for this batch. */
export function turnEvents(calls: readonly CallSpec[]): TurnEvent[] {
  return [
    { type: 'START' },
    ...calls.flatMap((c): TurnEvent[] => [
      ...(c.gated ? [{ type: `APPROVE_${c.id}` } as const, { type: `DENY_${c.id}` } as const] : []),
      { type: `SETTLE_${c.id}` } as const,
    ]),
  ];
}

/** The abstract state as far as the rules are concerned: state value and per-call statuses. */
export function serializeTurn(snapshot: TurnSnapshot): string {
  const value = typeof snapshot.value === 'string' ? snapshot.value : JSON.stringify(snapshot.value);
  return `${value} [${snapshot.context.calls.map((c, i) => `${c.id}:${snapshot.context.status[i]}`).join(' ')}]`;
}

export function createTurnTestModel(calls: readonly CallSpec[]) {
  const machine = createTurnModelMachine(calls);
  const model = createTestModel(machine, {
    events: turnEvents(calls),
    // Only events the model accepts in that state; no self-loops for rejected events.
    filterEvents: (snapshot, event) => snapshot.can(event),
    // The context is bounded (statuses + cursor), so the graph is finite; identify a
    // state by its rule-relevant projection, not by the edge that reached it.
    serializeState: (snapshot) => serializeTurn(snapshot),
    serializeTransition: () => '',
  });
  return { machine, model };
}

export interface GeneratedPaths {
  readonly model: ReturnType<typeof createTurnTestModel>['model'];
  /** Distinct abstract states (vertices of the graph). */
  readonly states: number;
  /** Distinct transitions (edges of the graph). */
  readonly transitions: number;
  /** `getShortestPaths()` after xstate/graph's prefix deduplication: covers every state. */
  readonly stateCover: TurnPath[];
  /**
   * One path per transition: the shortest path to its source state, the transition, then a
   * fixed completion to a final state. Duplicates removed. Covers every state and edge.
   */
  readonly transitionCover: TurnPath[];
}

/** The test events of a path (step 0 is the initial state, reached by xstate.init). */
export function pathEvents(path: TurnPath): string[] {
  return path.steps.slice(1).map((s) => s.event.type);
}

export function generatePaths(calls: readonly CallSpec[]): GeneratedPaths {
  const { model } = createTurnTestModel(calls);
  const adjacency = model.getAdjacencyMap();
  const keys = Object.keys(adjacency);
  const transitions = keys.reduce((n, k) => n + Object.keys(adjacency[k as keyof typeof adjacency]!.transitions).length, 0);
  const allShortest = model.getShortestPaths({ allowDuplicatePaths: true });
  const stateCover = model.getShortestPaths();

  const shortestTo = new Map<string, TurnPath>();
  for (const path of allShortest) shortestTo.set(serializeTurn(path.state), path);
  if (shortestTo.size !== keys.length) throw new Error(`expected a shortest path to each of ${keys.length} states, got ${shortestTo.size}`);

  const next = (snapshot: TurnSnapshot, event: TurnEvent): TurnSnapshot => {
    const entry = adjacency[serializeTurn(snapshot) as keyof typeof adjacency];
    const hit = entry && Object.values(entry.transitions).find((t) => t.event.type === event.type);
    if (!hit) throw new Error(`no transition ${event.type} from ${serializeTurn(snapshot)}`);
    return hit.state;
  };
  const extend = (path: TurnPath, event: TurnEvent): TurnPath => {
    const state = next(path.state, event);
    return { state, steps: [...path.steps, { state, event }], weight: path.weight + 1 };
  };
  // Completion: approve before settling, settle in request order. Always reaches `done`.
  const complete = (path: TurnPath): TurnPath => {
    let p = path;
    for (let guard = 0; p.state.status !== 'done'; guard++) {
      if (guard > 100) throw new Error(`no completion from ${serializeTurn(p.state)}`);
      const options = turnEvents(calls).filter((e) => p.state.can(e));
      const pick = options.find((e) => e.type.startsWith('APPROVE_')) ?? options.find((e) => e.type.startsWith('SETTLE_')) ?? options[0];
      if (!pick) throw new Error(`stuck in ${serializeTurn(p.state)}`);
      p = extend(p, pick);
    }
    return p;
  };

  const seen = new Set<string>();
  const transitionCover: TurnPath[] = [];
  for (const key of keys) {
    const source = shortestTo.get(key)!;
    for (const { event } of Object.values(adjacency[key as keyof typeof adjacency]!.transitions)) {
      const path = complete(extend(source, event));
      const id = pathEvents(path).join(' ');
      if (seen.has(id)) continue;
      seen.add(id);
      transitionCover.push(path);
    }
  }
  return { model, states: keys.length, transitions, stateCover, transitionCover };
}
