import { RUN_STATE } from '../../src/machines/run-states.js';
import type {
  ApprovalRecord,
  ApprovalState,
  DefinitionRecord,
  RunRecord,
  WireError,
  WireLogic,
  WireRecord,
  WireRunEvent,
  WireStatus,
} from '../../src/inspect/wire.js';
import { emptyTree, foldEvent, type TranscriptTree } from '../../src/inspect/transcript.js';

/** Everything the page knows, folded from wire records. */

export interface ActorInfo {
  readonly sessionId: string;
  readonly actorId: string;
  readonly parent: string | null;
  readonly logic: WireLogic;
  readonly run: string;
  readonly definitionId: string | undefined;
  readonly runId: string | undefined;
  readonly src: string | undefined;
  readonly createdTs: number;
  /** Found already running when the feed attached (its start time is unknown). */
  readonly bootstrap: boolean;
  readonly children: string[];
  status: WireStatus;
  endedTs: number | undefined;
  context: unknown;
  active: readonly string[];
  /** Transitions of the last microstep: `source->target` keys. */
  lastTransitions: string[];
}

export interface RunInfo {
  readonly run: string;
  agent: string;
  input: string;
  status: RunRecord['status'];
  startedAt: number;
  endedAt: number | undefined;
  output: string | undefined;
  error: WireError | undefined;
  readonly events: Array<{ ts: number; event: WireRunEvent }>;
  /** Actor session ids of this tree, in creation order. */
  readonly actors: string[];
  /** The transcript folded from every run event of the tree as it arrived (not bounded like `events`). */
  readonly transcript: TranscriptTree;
  /** Whether XState inspection was attached (else chart state and tree come from events). */
  inspected: boolean;
}

/** Every record of one approval (pending, then how it ended and who decided). */
export type ApprovalHistory = ApprovalRecord[];

export interface Lane {
  readonly key: string;
  readonly run: string;
  readonly runId: string;
  readonly callId: string;
  tool: string;
  path: readonly string[];
  /** The agent that made the call (changes the lane's group after a handoff). */
  agent: string;
  turn: number;
  order: number;
  start: number | undefined;
  end: number | undefined;
  isError: boolean;
  /** Completed without starting: rejected in preflight (unknown tool, bad args, denied). */
  rejected: boolean;
  approvalStart: number | undefined;
  approvalEnd: number | undefined;
  approvalState: ApprovalState | undefined;
  failures: number[];
  /** Dispatched while its run was in `barrier.runningAlone`. */
  alone: boolean;
  output: string | undefined;
}

export interface Band {
  readonly runId: string;
  readonly kind: 'waitingForInFlight' | 'runningAlone';
  readonly start: number;
  end: number | undefined;
}

/** A waiting approval as the page shows it: the wire record without its bookkeeping fields. */
export type PendingApproval = Pick<ApprovalRecord, 'run' | 'approvalId' | 'runId' | 'callId' | 'tool' | 'args' | 'path' | 'since' | 'deadline'>;


export class Store {
  readonly definitions = new Map<string, DefinitionRecord>();
  readonly actors = new Map<string, ActorInfo>();
  readonly runs = new Map<string, RunInfo>();
  readonly lanes = new Map<string, Lane>();
  readonly bands = new Map<string, Band[]>();
  readonly approvals = new Map<string, PendingApproval>();
  /** Every approval record by approval id, for the details panel. */
  readonly approvalLog = new Map<string, ApprovalHistory>();
  lastSeq = 0;
  /** Bumped on every applied record: views compare it to skip redrawing. */
  version = 0;
  /** Bumped per root run on each of its records (a view of one run redraws only when its own number moved). */
  readonly runVersions = new Map<string, number>();
  synced = false;
  private laneOrder = 0;
  /** Run machine session id → run id, for bands. */
  private readonly runBySession = new Map<string, string>();
  /** Tool-call actors already joined to their lane. */
  private readonly lanedActors = new Set<string>();

  apply(record: WireRecord): void {
    if (record.kind !== 'sync' && record.seq <= this.lastSeq) return; // replay overlap after a reconnect
    if (record.kind !== 'sync') this.lastSeq = record.seq;
    this.version++;
    if ('run' in record) this.runVersions.set(record.run, (this.runVersions.get(record.run) ?? 0) + 1);
    switch (record.kind) {
      case 'sync':
        this.synced = true;
        return;
      case 'definition':
        this.definitions.set(record.definitionId, record);
        return;
      case 'run': {
        const run = this.run(record.run);
        run.agent = record.agent;
        run.input = record.input;
        run.status = record.status;
        run.startedAt = record.startedAt;
        run.endedAt = record.endedAt;
        run.output = record.output;
        run.error = record.error;
        run.inspected ||= record.inspected;
        if (record.status !== 'running') for (const [key, a] of this.approvals) if (a.run === record.run) this.approvals.delete(key);
        return;
      }
      case 'actor': {
        if (this.actors.has(record.sessionId)) return;
        const info: ActorInfo = {
          sessionId: record.sessionId,
          actorId: record.actorId,
          parent: record.parentSessionId,
          logic: record.logic,
          run: record.run,
          definitionId: record.definitionId,
          runId: record.runId,
          src: record.src,
          createdTs: record.ts,
          bootstrap: record.bootstrap === true,
          children: [],
          status: 'active',
          endedTs: undefined,
          context: undefined,
          active: [],
          lastTransitions: [],
        };
        this.actors.set(record.sessionId, info);
        if (record.parentSessionId) this.actors.get(record.parentSessionId)?.children.push(record.sessionId);
        this.run(record.run).actors.push(record.sessionId);
        if (record.logic === 'run' && record.runId) this.runBySession.set(record.sessionId, record.runId);
        // A tool-call actor's lane is joined once its snapshot names the call (see laneFromActor).
        return;
      }
      case 'snapshot': {
        const actor = this.actors.get(record.sessionId);
        if (!actor) return;
        actor.status = record.status;
        if (record.context !== undefined) actor.context = record.context;
        if (actor.logic === 'toolCall' && !this.lanedActors.has(actor.sessionId)) this.laneFromActor(actor);
        if (record.active) this.setActive(actor, record.active, record.ts);
        if (record.status !== 'active' && actor.endedTs === undefined) {
          actor.endedTs = record.ts;
          if (actor.logic === 'toolCall') {
            const lane = this.laneForActor(actor);
            if (lane && record.status === 'done' && (lane.end === undefined || record.ts < lane.end)) lane.end = record.ts;
          }
        }
        return;
      }
      case 'microstep': {
        const actor = this.actors.get(record.sessionId);
        if (!actor) return;
        this.setActive(actor, record.active, record.ts);
        actor.lastTransitions = record.transitions.flatMap((t) => t.targets.map((target) => `${t.source}->${target}`));
        return;
      }
      case 'event':
        return;
      case 'run_event':
        this.runEvent(record.run, record.event, record.ts);
        return;
      case 'approval':
        this.approval(record);
        return;
    }
  }

  private run(id: string): RunInfo {
    let run = this.runs.get(id);
    if (!run) {
      run = { run: id, agent: '', input: '', status: 'running', startedAt: Date.now(), endedAt: undefined, output: undefined, error: undefined, events: [], actors: [], transcript: emptyTree(), inspected: false };
      this.runs.set(id, run);
    }
    return run;
  }

  /** Active ids change: barrier bands open and close. */
  private setActive(actor: ActorInfo, active: readonly string[], ts: number): void {
    actor.active = active;
    const runId = this.runBySession.get(actor.sessionId);
    if (!runId) return;
    const bands = this.bands.get(runId) ?? [];
    this.bands.set(runId, bands);
    const open = bands.find((b) => b.end === undefined);
    const kind = active.includes(RUN_STATE.runningAlone) ? 'runningAlone' : active.includes(RUN_STATE.waitingForInFlight) ? 'waitingForInFlight' : undefined;
    if (open && open.kind !== kind) open.end = ts;
    if (kind && (!open || open.kind !== kind)) bands.push({ runId, kind, start: ts, end: undefined });
  }

  private runEvent(run: string, event: WireRunEvent, ts: number): void {
    const info = this.run(run);
    info.events.push({ ts, event });
    if (info.events.length > 5_000) info.events.splice(0, info.events.length - 5_000);
    foldEvent(info.transcript, event);
    const call = event.call as { id: string; name: string } | undefined;
    if (!call) return;
    const lane = this.lane(run, event.runId, call.id, call.name);
    lane.tool = call.name;
    lane.path = event.path;
    lane.agent = event.agent;
    lane.turn = typeof event.turn === 'number' ? event.turn : lane.turn;
    switch (event.type) {
      case 'approval_required':
        lane.approvalStart ??= ts;
        break;
      case 'tool_call_started':
        if (lane.start === undefined || ts < lane.start) lane.start = ts;
        if (lane.approvalStart !== undefined && lane.approvalEnd === undefined) lane.approvalEnd = ts;
        lane.alone ||= this.inBand(event.runId, 'runningAlone', ts);
        break;
      case 'tool_call_failed':
        lane.failures.push(ts);
        break;
      case 'tool_call_completed':
        if (lane.end === undefined || ts < lane.end) lane.end = ts;
        lane.isError = event.isError === true;
        lane.output = typeof event.output === 'string' ? event.output : undefined;
        if (lane.start === undefined) lane.rejected = true;
        if (lane.approvalStart !== undefined && lane.approvalEnd === undefined) lane.approvalEnd = ts;
        break;
    }
  }

  private approval(record: ApprovalRecord): void {
    // By approval id: call ids repeat across sub-runs.
    const key = record.approvalId;
    const log = this.approvalLog.get(key) ?? [];
    log.push(record);
    this.approvalLog.set(key, log);
    const lane = this.lane(record.run, record.runId, record.callId, record.tool);
    lane.path = record.path;
    lane.approvalStart = Math.min(lane.approvalStart ?? Infinity, record.since);
    lane.approvalState = record.state;
    if (record.state === 'pending') {
      const { run, approvalId, runId, callId, tool, args, path, since, deadline } = record;
      this.approvals.set(key, { run, approvalId, runId, callId, tool, args, path, since, deadline });
    } else {
      this.approvals.delete(key);
      lane.approvalEnd ??= record.ts;
    }
  }

  private lane(run: string, runId: string, callId: string, tool: string): Lane {
    const key = `${runId}|${callId}`;
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = {
        key, run, runId, callId, tool, path: [], agent: '', turn: 0, order: this.laneOrder++,
        start: undefined, end: undefined, isError: false, rejected: false,
        approvalStart: undefined, approvalEnd: undefined, approvalState: undefined,
        failures: [], alone: false, output: undefined,
      };
      this.lanes.set(key, lane);
    }
    return lane;
  }

  /** The run id a tool-call actor belongs to: call actor → executor → run machine. */
  private runIdOfCallActor(actor: ActorInfo): string | undefined {
    const executor = actor.parent ? this.actors.get(actor.parent) : undefined;
    const runActor = executor?.parent ? this.actors.get(executor.parent) : undefined;
    return runActor?.runId;
  }

  /**
   * Joins a tool-call actor to the lane of its call (the lane run events use), keyed by the
   * model's call id from the actor's context: actor ids are `<turn>.<index>`, not call ids.
   */
  private laneFromActor(actor: ActorInfo): void {
    const runId = this.runIdOfCallActor(actor);
    const callId = callIdOf(actor);
    if (!runId || callId === undefined) return;
    this.lanedActors.add(actor.sessionId);
    const tool = (actor.context as { tool?: string } | undefined)?.tool ?? '';
    const lane = this.lane(actor.run, runId, callId, tool);
    const ts = actor.createdTs;
    if (!actor.bootstrap && (lane.start === undefined || ts < lane.start)) lane.start = ts;
    lane.alone ||= this.inBand(runId, 'runningAlone', ts);
  }

  private laneForActor(actor: ActorInfo): Lane | undefined {
    const runId = this.runIdOfCallActor(actor);
    const callId = callIdOf(actor);
    return runId && callId !== undefined ? this.lanes.get(`${runId}|${callId}`) : undefined;
  }

  private inBand(runId: string, kind: Band['kind'], ts: number): boolean {
    return (this.bands.get(runId) ?? []).some((b) => b.kind === kind && b.start <= ts && (b.end === undefined || ts <= b.end));
  }

  /** The run chart's definition (sent once per feed, also when no run was inspected). */
  runDefinition(): DefinitionRecord | undefined {
    for (const d of this.definitions.values()) if (d.machineId === 'run') return d;
    return undefined;
  }

  /** Run machine actors of one root run (root first, then sub-runs). */
  runActors(run: string): ActorInfo[] {
    return (this.runs.get(run)?.actors ?? []).map((id) => this.actors.get(id)!).filter((a) => a && a.logic === 'run');
  }
}

/** The model's call id of a tool-call actor (from its context), once a snapshot brought it. */
export function callIdOf(actor: ActorInfo): string | undefined {
  const callId = (actor.context as { callId?: unknown } | undefined)?.callId;
  return typeof callId === 'string' ? callId : undefined;
}
