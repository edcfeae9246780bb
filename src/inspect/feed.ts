import type { AnyActorRef, InspectionEvent } from 'xstate';
import { isRunState } from '../runtime/run-state.js';
import { CallContext } from '../tools/call-context.js';
import { activeStateIds, isMachineLogic, walkMachine, type MachineLike } from './definition.js';
import { INSPECT_LIMITS, errorToWire, sanitize, type SanitizeLimits, type Summarizer } from './sanitize.js';
import {
  WIRE_VERSION,
  type ActorRecord,
  type DefinitionRecord,
  type Unstamped,
  type WireLogic,
  type WireRecord,
  type WireStatus,
} from './wire.js';

/**
 * When to attach XState inspection to runs:
 * - `on-demand` (default): only while at least one feed subscriber is connected; runs that
 *   are already going when the first one connects are attached late (their actor tree is
 *   bootstrapped from snapshots). Runs nobody watches pay nothing.
 * - `always`: every tracked run, from its first event (full history for late clients).
 * - `off`: never (run, run_event and approval records still flow).
 */
export type InspectMode = 'on-demand' | 'always' | 'off';

export interface FeedOptions {
  readonly mode?: InspectMode;
  /** Root runs whose history is kept for replay (oldest finished dropped first). Default 50. */
  readonly maxRuns?: number;
  /** Records kept per root run; past it, events, microsteps and text deltas are no longer stored (still sent live). Default 10,000. */
  readonly maxRecordsPerRun?: number;
  readonly limits?: SanitizeLimits;
}

export type FeedListener = (record: WireRecord) => void;

interface History {
  readonly records: WireRecord[];
  finished: boolean;
  dropped: number;
}

/** Summaries for objects the generic walk must not enter. */
const SUMMARIZERS: readonly Summarizer[] = [
  (value) => (isRunState(value) ? { $run: value.runId, agent: value.agent.name, turn: value.turn, inFlight: value.inFlight } : undefined),
  (value) => (value instanceof CallContext ? { $type: 'CallContext', callId: value.callId } : undefined),
];

const now = (): number => Math.round((performance.timeOrigin + performance.now()) * 100) / 100;

/**
 * Turns XState inspection events of run trees into wire records, keeps a bounded history
 * per root run and fans records out to subscribers (replaying history to late ones).
 */
export class InspectionFeed {
  readonly mode: InspectMode;
  private readonly maxRuns: number;
  private readonly maxRecordsPerRun: number;
  readonly limits: SanitizeLimits;
  private seq = 0;
  private readonly definitions: DefinitionRecord[] = [];
  private readonly definitionIds = new WeakMap<object, string>();
  private definitionCount = 0;
  private readonly histories = new Map<string, History>();
  private readonly listeners = new Set<FeedListener>();
  /** Root actors of runs that are still going, for late attach. */
  private readonly tracked = new Map<string, AnyActorRef>();
  private readonly recorders = new Map<string, RunRecorder>();

  constructor(options: FeedOptions = {}) {
    this.mode = options.mode ?? 'on-demand';
    this.maxRuns = options.maxRuns ?? 50;
    this.maxRecordsPerRun = options.maxRecordsPerRun ?? 10_000;
    this.limits = options.limits ?? INSPECT_LIMITS;
  }

  /** True while at least one subscriber is connected. */
  get watching(): boolean {
    return this.listeners.size > 0;
  }

  /** Whether XState inspection is attached to this run right now. */
  isInspecting(run: string): boolean {
    return this.recorders.get(run)?.active === true;
  }

  /**
   * The `inspect` option for a run about to start, or undefined when nobody needs it (then
   * the run costs nothing extra; it can still be attached later with `track`).
   */
  observerFor(run: string): ((event: InspectionEvent) => void) | undefined {
    if (this.mode === 'off' || (this.mode === 'on-demand' && !this.watching)) return undefined;
    const recorder = this.recorder(run);
    recorder.active = true;
    return (event) => recorder.handle(event);
  }

  /** Registers a started run's root actor; attaches inspection late if someone is watching and it is not attached yet. */
  track(run: string, actor: AnyActorRef): void {
    this.tracked.set(run, actor);
    this.history(run);
    if (this.shouldInspect() && !this.isInspecting(run)) this.attach(run, actor);
  }

  /** The run has ended: inspection detaches once its last snapshots are in. */
  untrack(run: string): void {
    this.tracked.delete(run);
    const history = this.histories.get(run);
    if (history) history.finished = true;
    setImmediate(() => {
      if (this.tracked.has(run)) return;
      this.recorders.get(run)?.detach();
      this.recorders.delete(run);
      this.trim();
    });
  }

  /** Stamps a record, stores it in its run's history and sends it to every subscriber. */
  publish<R extends WireRecord>(record: Unstamped<R>): R {
    const stamped = { ...record, seq: ++this.seq, ts: now() } as unknown as R;
    this.store(stamped);
    for (const listener of this.listeners) {
      try {
        listener(stamped);
      } catch {
        // A failing subscriber must not break the run or other subscribers.
      }
    }
    return stamped;
  }

  /**
   * Replays definitions and the retained history (records with seq > `after`), then a
   * `sync` record, then live records. Returns the unsubscribe function.
   */
  subscribe(listener: FeedListener, options: { after?: number } = {}): () => void {
    const after = options.after ?? 0;
    const replay = this.replay(after);
    for (const record of replay) listener(record);
    listener({ kind: 'sync', seq: this.seq, ts: now(), version: WIRE_VERSION, replayed: replay.length });
    const first = this.listeners.size === 0;
    this.listeners.add(listener);
    if (first && this.shouldInspect()) {
      for (const [run, actor] of this.tracked) if (!this.isInspecting(run)) this.attach(run, actor);
    }
    return () => {
      if (!this.listeners.delete(listener)) return;
      if (this.listeners.size === 0 && this.mode === 'on-demand') {
        for (const recorder of this.recorders.values()) recorder.detach();
        this.recorders.clear();
      }
    };
  }

  /**
   * Definitions plus retained run histories with seq > after, in seq order (a definition
   * always has a lower seq than the first actor record that refers to it).
   */
  replay(after = 0): WireRecord[] {
    const out: WireRecord[] = this.definitions.filter((d) => d.seq > after);
    for (const history of this.histories.values()) for (const record of history.records) if (record.seq > after) out.push(record);
    return out.sort((a, b) => a.seq - b.seq);
  }

  /** The retained history of one root run (tests, GET endpoints). */
  historyOf(run: string): readonly WireRecord[] {
    return this.histories.get(run)?.records ?? [];
  }

  /** Definition id for a machine, publishing its definition the first time it is seen. */
  definitionFor(machine: MachineLike): string {
    let id = this.definitionIds.get(machine);
    if (id) return id;
    id = `${machine.id}#${++this.definitionCount}`;
    this.definitionIds.set(machine, id);
    const record: DefinitionRecord = { kind: 'definition', seq: ++this.seq, ts: now(), definitionId: id, machineId: machine.id, root: walkMachine(machine) };
    this.definitions.push(record);
    for (const listener of this.listeners) listener(record);
    return id;
  }

  sanitize(value: unknown): unknown {
    return sanitize(value, this.limits, SUMMARIZERS);
  }

  private shouldInspect(): boolean {
    return this.mode === 'always' || (this.mode === 'on-demand' && this.watching);
  }

  /** Late attach: subscribe to the run's actor system and describe the actors that already exist. */
  private attach(run: string, actor: AnyActorRef): void {
    const recorder = this.recorder(run);
    recorder.active = true;
    const subscription = actor.system.inspect((event: InspectionEvent) => recorder.handle(event));
    recorder.unsubscribe = () => subscription.unsubscribe();
    recorder.bootstrap(actor);
  }

  private recorder(run: string): RunRecorder {
    let recorder = this.recorders.get(run);
    if (!recorder) {
      recorder = new RunRecorder(run, this);
      this.recorders.set(run, recorder);
    }
    return recorder;
  }

  private history(run: string): History {
    let history = this.histories.get(run);
    if (!history) {
      history = { records: [], finished: false, dropped: 0 };
      this.histories.set(run, history);
      this.trim();
    }
    return history;
  }

  private store(record: WireRecord): void {
    if (!('run' in record)) return;
    const history = this.history(record.run);
    if (history.records.length >= this.maxRecordsPerRun && isDroppable(record)) {
      history.dropped++;
      return;
    }
    history.records.push(record);
  }

  /** Drops the oldest finished histories beyond maxRuns. */
  private trim(): void {
    if (this.histories.size <= this.maxRuns) return;
    for (const [run, history] of this.histories) {
      if (this.histories.size <= this.maxRuns) break;
      if (history.finished && !this.tracked.has(run)) this.histories.delete(run);
    }
  }
}

function isDroppable(record: WireRecord): boolean {
  if (record.kind === 'event' || record.kind === 'microstep') return true;
  return record.kind === 'run_event' && (record.event.type === 'text_delta' || record.event.type === 'reasoning_delta');
}

interface KnownActor {
  readonly machine: MachineLike | undefined;
}

/** Converts one run tree's inspection events; inert once detached. */
class RunRecorder {
  active = false;
  unsubscribe: (() => void) | undefined;
  private readonly known = new Map<string, KnownActor>();

  constructor(
    private readonly run: string,
    private readonly feed: InspectionFeed,
  ) {}

  detach(): void {
    this.active = false;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  handle(event: InspectionEvent): void {
    if (!this.active) return;
    try {
      switch (event.type) {
        case '@xstate.actor':
          this.ensureKnown(event.actorRef as AnyActorRef, false);
          return;
        case '@xstate.event': {
          const target = event.actorRef as AnyActorRef;
          const source = event.sourceRef as AnyActorRef | undefined;
          this.ensureKnown(target, true);
          if (source) this.ensureKnown(source, true);
          this.feed.publish({
            kind: 'event',
            run: this.run,
            sessionId: target.sessionId,
            sourceSessionId: source?.sessionId ?? null,
            event: this.eventPayload(event.event),
          });
          return;
        }
        case '@xstate.snapshot':
          this.ensureKnown(event.actorRef as AnyActorRef, true);
          this.snapshot(event.actorRef as AnyActorRef, event.snapshot, event.event.type);
          return;
        case '@xstate.microstep': {
          const ref = event.actorRef as AnyActorRef;
          this.ensureKnown(ref, true);
          const machine = this.known.get(ref.sessionId)?.machine;
          if (!machine) return;
          const value = (event.snapshot as { value?: unknown }).value;
          const transitions = (event as unknown as { _transitions?: ReadonlyArray<{ source?: { id: string }; target?: ReadonlyArray<{ id: string }>; eventType?: string }> })._transitions ?? [];
          this.feed.publish({
            kind: 'microstep',
            run: this.run,
            sessionId: ref.sessionId,
            eventType: event.event.type,
            value: this.feed.sanitize(value),
            active: activeStateIds(machine, value),
            transitions: transitions.map((t) => ({ source: t.source?.id ?? '', targets: (t.target ?? []).map((s) => s.id), event: t.eventType ?? '' })),
          });
          return;
        }
        default:
          return; // @xstate.action: not part of the wire format
      }
    } catch {
      // Inspection must never disturb a run.
    }
  }

  /** Describes the actors that exist already (late attach), depth-first from the root. */
  bootstrap(root: AnyActorRef): void {
    const visit = (ref: AnyActorRef): void => {
      this.ensureKnown(ref, true);
      const snapshot = ref.getSnapshot() as { children?: unknown } | undefined;
      const children = snapshot?.children;
      const list = children instanceof Map ? [...children.values()] : children && typeof children === 'object' ? Object.values(children) : [];
      for (const child of list) if (child && typeof child === 'object' && 'sessionId' in child) visit(child as AnyActorRef);
    };
    try {
      visit(root);
    } catch {
      // ignore: best effort
    }
  }

  /** Publishes an actor record the first time an actor is seen (its parents first). */
  private ensureKnown(ref: AnyActorRef, bootstrap: boolean): void {
    if (this.known.has(ref.sessionId)) return;
    const parent = ref._parent;
    if (parent && !this.known.has(parent.sessionId)) this.ensureKnown(parent, true);
    const logic = (ref as unknown as { logic?: unknown }).logic;
    const machine = isMachineLogic(logic) ? logic : undefined;
    this.known.set(ref.sessionId, { machine });
    const kind = logicKind(logic, machine);
    const src = (ref as unknown as { src?: unknown }).src;
    const record: Unstamped<ActorRecord> = {
      kind: 'actor',
      run: this.run,
      sessionId: ref.sessionId,
      actorId: ref.id,
      parentSessionId: parent?.sessionId ?? null,
      logic: kind,
      ...(machine ? { definitionId: this.feed.definitionFor(machine) } : {}),
      ...(kind === 'run' ? { runId: ref.id } : {}),
      ...(typeof src === 'string' ? { src } : {}),
      ...(bootstrap ? { bootstrap: true } : {}),
    };
    this.feed.publish(record);
    // An actor found late already has a snapshot: send it so the page shows its state.
    if (bootstrap) {
      const snapshot = ref.getSnapshot() as unknown;
      if (snapshot) this.snapshot(ref, snapshot, 'bootstrap');
    }
  }

  private snapshot(ref: AnyActorRef, snapshot: unknown, eventType: string): void {
    const s = snapshot as { status?: string; value?: unknown; context?: unknown; output?: unknown; error?: unknown };
    const machine = this.known.get(ref.sessionId)?.machine;
    const status = (['active', 'done', 'error', 'stopped'].includes(s.status ?? '') ? s.status : 'active') as WireStatus;
    this.feed.publish({
      kind: 'snapshot',
      run: this.run,
      sessionId: ref.sessionId,
      status,
      eventType,
      ...(machine ? { value: this.feed.sanitize(s.value), active: activeStateIds(machine, s.value) } : {}),
      ...(s.context !== undefined ? { context: this.feed.sanitize(s.context) } : {}),
      ...(status === 'done' && s.output !== undefined ? { output: this.feed.sanitize(s.output) } : {}),
      ...(status === 'error' ? { error: errorToWire(s.error) } : {}),
    });
  }

  /** Sanitised event; the executor's `dispatch` is reduced to the calls it carries. */
  private eventPayload(event: { type: string }): { type: string; [key: string]: unknown } {
    if (event.type === 'dispatch') {
      const jobs = (event as { jobs?: unknown }).jobs;
      if (Array.isArray(jobs)) {
        return {
          type: 'dispatch',
          calls: jobs.map((job: { ctx?: { callId?: unknown }; tool?: { name?: unknown } }) => ({ callId: String(job?.ctx?.callId ?? ''), tool: String(job?.tool?.name ?? '') })),
        };
      }
    }
    const clean = this.feed.sanitize(event);
    return clean && typeof clean === 'object' && !Array.isArray(clean) ? ({ ...clean, type: event.type } as { type: string }) : { type: event.type };
  }
}

function logicKind(logic: unknown, machine: MachineLike | undefined): WireLogic {
  if (machine) return machine.id === 'run' ? 'run' : machine.id === 'wait' ? 'wait' : 'machine';
  const config = (logic as { config?: unknown } | undefined)?.config;
  if (config === 'troupe.toolExecutor') return 'executor';
  if (config === 'troupe.toolCall') return 'toolCall';
  if (typeof config === 'function') return 'promise';
  return 'other';
}
