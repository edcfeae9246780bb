/**
 * Typed errors. Every failure a user can meet has its own class and a stable `code`,
 * so callers can branch on `instanceof` or on `error.code` after JSON transport.
 */
export class TroupeError extends Error {
  readonly code: string = 'TROUPE_ERROR';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Misconfiguration detected before anything runs (name clashes, bad options). */
export class UserError extends TroupeError {
  override readonly code = 'USER_ERROR';
}

/** Thrown by tool authors to control the message the model sees; `hint` is appended. */
export class ToolError extends TroupeError {
  override readonly code = 'TOOL_ERROR';
  readonly hint: string | undefined;
  constructor(message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, options);
    this.hint = options?.hint;
  }
}

export interface ArgumentIssue {
  readonly path: string;
  readonly message: string;
}

/** Deterministic argument failure: never retried, becomes an error result. */
export class InvalidToolArguments extends TroupeError {
  override readonly code = 'INVALID_TOOL_ARGUMENTS';
  readonly issues: readonly ArgumentIssue[];
  constructor(message: string, issues: readonly ArgumentIssue[] = []) {
    super(message);
    this.issues = issues;
  }
}

/** The run was cancelled (handle.cancel, AbortSignal, or a tool throwing it). */
export class RunCancelled extends TroupeError {
  override readonly code = 'RUN_CANCELLED';
  readonly reason: string;
  constructor(reason = 'cancelled') {
    super(`Run cancelled: ${reason}`);
    this.reason = reason;
  }
}

/**
 * A run's lease is held by another owner, or the run moved on under a fenced writer (another
 * process appended). Whatever raised it wrote nothing.
 */
export class RunLocked extends TroupeError {
  override readonly code = 'RUN_LOCKED';
  readonly runId: string;
  /** The lease holder, when known. */
  readonly owner: string | undefined;
  /** When the holder's lease expires (ms since the epoch), when known. */
  readonly expiresAt: number | undefined;
  constructor(runId: string, detail: { owner?: string; expiresAt?: number; message?: string } = {}) {
    super(
      detail.message ??
        `Run '${runId}' is locked by '${detail.owner ?? 'another owner'}'${detail.expiresAt !== undefined ? ` until ${new Date(detail.expiresAt).toISOString()}` : ''}; nothing was written. Wait for the lease to expire or stop the other process.`,
    );
    this.runId = runId;
    this.owner = detail.owner;
    this.expiresAt = detail.expiresAt;
  }
}

/**
 * `result()` of a run that parked for approvals (`run_suspended`): it did not fail and can be
 * continued with `Runner.resume` once its approvals are decided (`Runner.decide`).
 */
export class RunSuspended extends TroupeError {
  override readonly code = 'RUN_SUSPENDED';
  readonly runId: string;
  /** The approvals among the waits it parked on. */
  readonly approvals: readonly { readonly approvalId: string; readonly callId: string; readonly tool: string; readonly arguments: string; readonly requestedAt: number }[];
  /** Every wait it parked on (`kind`: approval, question, event, timer; `waitId`; `detail`). */
  readonly waits: readonly { readonly waitId: string; readonly kind: string; readonly tool: string; readonly detail: Readonly<Record<string, unknown>>; readonly deadline: number | undefined }[];
  constructor(runId: string, approvals: RunSuspended['approvals'], waits: RunSuspended['waits'] = []) {
    const others = waits.filter((w) => w.kind !== 'approval');
    super(
      others.length === 0
        ? `Run '${runId}' is suspended, waiting for ${approvals.length === 1 ? 'approval' : 'approvals'} ${approvals.map((a) => `'${a.approvalId}' (${a.tool})`).join(', ')}; decide with Runner.decide and continue with Runner.resume.`
        : `Run '${runId}' is suspended, waiting for ${waits.map(describeWait).join(', ')}; resolve them (Runner.decide, Runner.answer, Runner.signal; a timer needs nothing) and continue with Runner.resume.`,
    );
    this.runId = runId;
    this.approvals = approvals;
    this.waits = waits;
  }
}

function describeWait(wait: RunSuspended['waits'][number]): string {
  switch (wait.kind) {
    case 'approval': return `approval '${wait.waitId}' (${wait.tool})`;
    case 'event': return `event '${String(wait.detail['name'])}' (wait '${wait.waitId}')`;
    case 'timer': return `the time ${new Date(wait.deadline ?? 0).toISOString()} (wait '${wait.waitId}')`;
    default: return `${wait.kind} '${wait.waitId}'`;
  }
}

/**
 * A shared store could not be reached or used: the server refused or dropped the connection,
 * the credentials were wrong, the database does not exist, or it is shutting down. The
 * operation's transaction did not commit (no partial write), except when the connection was
 * lost while committing: then `outcome` is 'unknown' and a reload tells (a fenced retry is
 * safe either way, it is refused if the first attempt did land). `cause` is the driver's error.
 */
export class StoreUnavailable extends TroupeError {
  override readonly code = 'STORE_UNAVAILABLE';
  /** The store, without secrets, e.g. "PostgreSQL checkpoint store 'postgres://app@db:5432/troupe'". */
  readonly store: string;
  /** 'not_written': nothing of the operation was stored; 'unknown': lost during the commit. */
  readonly outcome: 'not_written' | 'unknown';
  constructor(store: string, message: string, options: { cause?: unknown; outcome?: 'not_written' | 'unknown' } = {}) {
    super(message, { cause: options.cause });
    this.store = store;
    this.outcome = options.outcome ?? 'not_written';
  }
}

/**
 * A cluster run's stored event stream (`troupe_events`) was pruned (`troupe db prune`, or a
 * worker's `pruneEvents`) up to event `through`, so a stream from an earlier cursor cannot be
 * replayed. The run's log and result, the truth, are kept: read them from the checkpoint
 * store (`store.load(runId)`, `GET /api/runs/:id`).
 */
export class EventsPruned extends TroupeError {
  override readonly code = 'EVENTS_PRUNED';
  constructor(
    readonly runId: string,
    /** The id of the last pruned event: a cursor at or above it still reads what came after. */
    readonly through: number,
    /** When it was pruned (epoch ms). */
    readonly prunedAt: number,
  ) {
    super(
      `The events of run '${runId}' up to event ${through} were pruned at ${new Date(prunedAt).toISOString()} (event retention); ` +
        `its log and result are kept: read them with GET /api/runs/${encodeURIComponent(runId)} or store.load('${runId}').`,
    );
  }
}

/** Why an AbortSignal aborted, as a RunCancelled reason (a RunCancelled's own reason, an error's message, a string). */
export function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (reason instanceof RunCancelled) return reason.reason;
  if (reason instanceof Error) return reason.message || reason.name || 'aborted';
  return typeof reason === 'string' ? reason : 'aborted';
}

export type BudgetKind = 'inputTokens' | 'outputTokens' | 'totalTokens' | 'toolCalls' | 'durationMs';

/** A budget limit was passed; the run stops at its next safe point. */
export class BudgetExceeded extends TroupeError {
  override readonly code = 'BUDGET_EXCEEDED';
  readonly kind: BudgetKind;
  readonly used: number;
  readonly limit: number;
  constructor(kind: BudgetKind, used: number, limit: number) {
    super(`${BUDGET_LABELS[kind]} ${used} exceeds budget ${limit}`);
    this.kind = kind;
    this.used = used;
    this.limit = limit;
  }
}

const BUDGET_LABELS: Record<BudgetKind, string> = {
  inputTokens: 'input tokens',
  outputTokens: 'output tokens',
  totalTokens: 'total tokens',
  toolCalls: 'tool call count',
  durationMs: 'duration ms',
};

export class MaxTurnsExceeded extends TroupeError {
  override readonly code = 'MAX_TURNS_EXCEEDED';
  readonly maxTurns: number;
  constructor(maxTurns: number) {
    super(`max turns ${maxTurns} exceeded`);
    this.maxTurns = maxTurns;
  }
}

/** The model port failed (provider error, malformed stream, script exhausted). */
export class ModelError extends TroupeError {
  override readonly code: string = 'MODEL_ERROR';
}

export class ScriptExhausted extends ModelError {
  override readonly code = 'SCRIPT_EXHAUSTED';
}

/** A tool attempt ran past its `timeoutMs`. Retried like any other transient error. */
export class ToolTimeout extends TroupeError {
  override readonly code = 'TOOL_TIMEOUT';
  constructor(toolName: string, timeoutMs: number) {
    super(`tool '${toolName}' timed out after ${timeoutMs} ms`);
  }
}

/** A wait (an external event, a person's answer) reached its deadline undecided: the call that waited gets this error result. */
export class WaitTimeout extends TroupeError {
  override readonly code = 'WAIT_TIMEOUT';
  constructor(message: string) {
    super(message);
  }
}

/** Normalises anything thrown into an Error without losing the original. */
export function asError(value: unknown): Error {
  if (value instanceof Error) return value;
  return new TroupeError(typeof value === 'string' ? value : `Non-error thrown: ${safeString(value)}`, { cause: value });
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** A model-side hook (beforeModelCall, afterModelResponse, onRunEnd) threw; the run fails with this. */
export class HookError extends TroupeError {
  override readonly code = 'HOOK_ERROR';
  readonly hook: string;
  constructor(hook: string, cause: unknown) {
    super(`${hook} hook failed: ${cause instanceof Error ? cause.message || cause.name : String(cause)}`, { cause });
    this.hook = hook;
  }
}

/** A guardrail's tripwire ended the run. `info` is what the guardrail attached. */
export class GuardrailTripped extends TroupeError {
  override readonly code = 'GUARDRAIL_TRIPPED';
  readonly guardrail: string;
  readonly kind: 'input' | 'output';
  readonly info: unknown;
  constructor(kind: 'input' | 'output', guardrail: string, info: unknown) {
    super(`${kind} guardrail '${guardrail}' tripped`);
    this.kind = kind;
    this.guardrail = guardrail;
    this.info = info;
  }
}

/** The final reply did not match the agent's outputType, also after the repair turn. */
export class OutputValidationError extends TroupeError {
  override readonly code = 'OUTPUT_VALIDATION_ERROR';
  readonly output: string;
  constructor(message: string, output: string) {
    super(message);
    this.output = output;
  }
}

/**
 * A plugin failed: its `setup` threw or returned something malformed, or one of its view
 * injectors threw. The run fails with it (every open call still gets its one result);
 * `plugin` and `agent` name where it happened, `stage` what was running.
 */
export class PluginError extends TroupeError {
  override readonly code = 'PLUGIN_ERROR';
  readonly plugin: string;
  readonly agent: string;
  readonly stage: 'setup' | 'view';
  constructor(plugin: string, agent: string, stage: 'setup' | 'view', cause: unknown) {
    const what = stage === 'setup' ? 'setup failed' : 'view injector failed';
    super(`Plugin '${plugin}' of agent '${agent}': ${what}: ${cause instanceof Error ? cause.message || cause.name : String(cause)}`, { cause });
    this.plugin = plugin;
    this.agent = agent;
    this.stage = stage;
  }
}
