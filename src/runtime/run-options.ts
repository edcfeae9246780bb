import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import { checkBudget } from './budget-options.js';
import type { InspectionEvent, Observer } from 'xstate';
import type { Tracer } from '@opentelemetry/api';
import type { CheckpointStore } from '../store/checkpoint-store.js';
import type { Session } from '../store/session.js';
import type { AssistantMessage, Budget, Message, ToolCallRequest, UserMessage } from '../types.js';
import { checkContentParts, hasMedia, partsText, reasoningPartsIssue, type ReasoningPart } from '../message-parts.js';
import { resolvePolicy, type ContextPolicy } from '../context/policy.js';
import { givenExtra } from './extra.js';
import { RunSubscribers, type RunSubscriber } from './subscribers.js';
import { checkCustomMessage } from '../context/custom-messages.js';
export type { InputMessage, RunInputValue } from '../types.js';

/**
 * Options of one run. Invalid values (a negative maxTurns, an unknown budget field) fail
 * the run with a UserError before anything runs.
 */
export interface RunOptions<Deps = any> {
  /** Default 10. */
  maxTurns?: number;
  budget?: Budget;
  /** Aborting it cancels the run (an already-aborted signal: no model request is made). */
  signal?: AbortSignal;
  /** User dependencies, reachable in tools as `ctx.deps`. */
  context?: Deps;
  runId?: string;
  /** Auto-deny an approval nobody decided within this time; each waiting call has its own timer. */
  approvalTimeoutMs?: number;
  /** Extra system text for the whole run, added after the agent's instructions and kept across handoffs. */
  instructions?: string;
  /**
   * The run's shared state at its start: a plain JSON object its tools and hooks read and change
   * in place as `ctx.extra`, stored in the run's log when it changes (durable runs), so a resumed
   * run continues with it (the stored value wins over this one). Each run, sub-runs included, has its own.
   */
  extra?: Record<string, unknown>;
  /** At most this many tool calls of the run in flight at once; the rest wait in request order. */
  maxConcurrentToolCalls?: number;
  /** How many queued steer (and follow-up) messages one model request takes: all of them (default) or one. */
  steeringMode?: 'all' | 'one-at-a-time';
  /** Durable runs: the run's log is appended to a checkpoint store as it happens. */
  checkpoint?: CheckpointOptions;
  /**
   * Conversation memory: the run starts from the session's history, and when it completes
   * its messages are appended to the session (once per run id).
   */
  session?: { store: Session; id: string };
  /**
   * XState inspection observer for this run's actor system (the run, its executor, tool-call
   * and sub-run actors). Opt-in: without it, inspection costs nothing.
   */
  inspect?: InspectionObserver;
  /**
   * OpenTelemetry tracer (`@opentelemetry/api`): the run tree is traced with GenAI spans
   * (`invoke_agent` per run and sub-run, `chat` per model request, `execute_tool` per call,
   * approval, barrier and handoff spans), parented under the context active when the run
   * starts. Tracing only observes: it never changes how a run goes, and a throwing tracer is
   * ignored. Unset (default): no tracing code runs and `@opentelemetry/api` is not loaded.
   * See README "Tracing (OpenTelemetry)".
   */
  tracer?: Tracer;
  /** View-only compaction of what the model is sent; overrides the agent's (see ContextPolicy). */
  contextPolicy?: ContextPolicy;
  /**
   * Run-level event subscribers (see RunSubscriber): `{ tool_call_completed: (e) => …, '*': (e) => … }`
   * or an array of such objects. Every event of the run tree (sub-runs included) goes to each
   * handler of its type or '*', in registration order (this option's, then `handle.on`'s),
   * before it enters the stream, whether anyone reads the stream or not (Runner.run too). A
   * handler that throws or rejects is skipped and reported as a `subscriber_failed` event; it
   * never fails or changes the run. Handlers observe: they run inside the run's steps, so keep
   * them short (hand slow work to a queue).
   */
  on?: RunSubscriber | readonly RunSubscriber[];
}

/**
 * Receives XState's raw inspection events (`@xstate.actor`, `@xstate.event`, `@xstate.snapshot`, …):
 * a function or an observer object, as `createActor` takes (e.g. `@statelyai/inspect`'s `inspector.inspect`).
 */
export type InspectionObserver = ((event: InspectionEvent) => void) | Observer<InspectionEvent>;

/** The observer as one function (for composing observers); undefined stays undefined. */
export function inspectionCallback(inspect: InspectionObserver | undefined): ((event: InspectionEvent) => void) | undefined {
  if (inspect === undefined || typeof inspect === 'function') return inspect;
  return (event) => inspect.next?.(event);
}

/** Every run option (an unknown one is a UserError naming the closest). */
export const RUN_OPTION_KEYS = optionKeys<RunOptions>({
  maxTurns: true,
  budget: true,
  signal: true,
  context: true,
  runId: true,
  approvalTimeoutMs: true,
  instructions: true,
  extra: true,
  maxConcurrentToolCalls: true,
  steeringMode: true,
  checkpoint: true,
  session: true,
  inspect: true,
  tracer: true,
  contextPolicy: true,
  on: true,
});

const CHECKPOINT_KEYS = optionKeys<CheckpointOptions>({ store: true, runId: true, ifRunExists: true, owner: true, leaseMs: true, claimWaitMs: true, suspendOnWait: true });
const SESSION_KEYS = optionKeys<NonNullable<RunOptions['session']>>({ store: true, id: true });
const IF_RUN_EXISTS = ['resume', 'restart', 'fail', 'resume_only'];

/** The input as transcript messages plus extra system text. @throws UserError on a malformed message. */
export function normaliseInput(input: unknown): { messages: Message[]; system: string[] } {
  if (typeof input === 'string') return { messages: [{ role: 'user', content: input }], system: [] };
  if (!Array.isArray(input)) throw new UserError(`Run input must be a string or an array of messages, got ${input === null ? 'null' : typeof input}.`);
  if (input.length === 0) throw new UserError('Run input must not be an empty array of messages.');
  const messages: Message[] = [];
  const system: string[] = [];
  input.forEach((m: unknown, i) => {
    const message = m as Record<string, unknown> | null;
    const where = `Run input message #${i + 1}`;
    if (!message || typeof message !== 'object') throw new UserError(`${where} must be an object with a role.`);
    const content = message.content;
    switch (message.role) {
      case 'system':
        if (typeof content !== 'string') throw new UserError(`${where} (system) needs string content.`);
        system.push(content);
        return;
      case 'user':
        messages.push(userInput(message, where));
        return;
      case 'assistant': {
        const calls = message.toolCalls ?? [];
        if (typeof content !== 'string' || !Array.isArray(calls)) throw new UserError(`${where} (assistant) needs string content and a toolCalls array.`);
        for (const c of calls as Array<Record<string, unknown>>) {
          if (!c || typeof c.id !== 'string' || typeof c.name !== 'string' || typeof c.arguments !== 'string') throw new UserError(`${where} (assistant) has a malformed tool call: ${JSON.stringify(c)}.`);
        }
        const assistant: AssistantMessage = { role: 'assistant', content, toolCalls: calls as ToolCallRequest[], agent: typeof message.agent === 'string' ? message.agent : '' };
        messages.push(withReasoning(assistant, message, where));
        return;
      }
      case 'tool': {
        if (typeof content !== 'string' || typeof message.callId !== 'string' || typeof message.name !== 'string') throw new UserError(`${where} (tool) needs callId, name and string content.`);
        const result = { role: 'tool' as const, callId: message.callId, name: message.name, content, isError: message.isError === true };
        messages.push(message.parts === undefined ? result : { ...result, parts: checkContentParts(message.parts, `${where} (tool)`) });
        return;
      }
      default:
        // Any other role is a custom message (a note, a UI event): kept in the transcript, not sent to the model unless convertToModel rewrites it.
        if (typeof message.role !== 'string' || message.role === '') throw new UserError(`${where} needs a role (system, user, assistant, tool, or a custom role: a non-empty string), got ${JSON.stringify(message.role)}.`);
        messages.push(checkCustomMessage(message, where));
        return;
    }
  });
  return { messages, system };
}

/** An assistant message of the input keeps its reasoning and reasoning parts (signatures go back to the provider). @throws UserError */
function withReasoning(assistant: AssistantMessage, message: Record<string, unknown>, where: string): AssistantMessage {
  const { reasoning, reasoningParts } = message;
  if (reasoning !== undefined && typeof reasoning !== 'string') throw new UserError(`${where} (assistant) has a reasoning that is not a string.`);
  if (reasoningParts === undefined) return reasoning ? { ...assistant, reasoning } : assistant;
  const issue = reasoningPartsIssue(reasoningParts);
  if (issue) throw new UserError(`${where} (assistant): reasoningParts ${issue}.`);
  return { ...assistant, ...(reasoning ? { reasoning } : {}), reasoningParts: reasoningParts as ReasoningPart[] };
}

/** A user message of the input: string content, content parts, or (a stored message) both. @throws UserError */
function userInput(message: Record<string, unknown>, where: string): UserMessage {
  const { content, parts } = message;
  if (Array.isArray(content)) {
    const checked = checkContentParts(content, `${where} (user)`);
    return hasMedia(checked) ? { role: 'user', content: partsText(checked), parts: checked } : { role: 'user', content: partsText(checked) };
  }
  if (typeof content !== 'string') throw new UserError(`${where} (user) needs string content or an array of content parts.`);
  if (parts === undefined) return { role: 'user', content };
  return { role: 'user', content, parts: checkContentParts(parts, `${where} (user)`) };
}

/**
 * Rejects bad run input and options up front, so a typo fails the run clearly instead of
 * silently disabling a limit: unknown keys (of the options, `budget`, `checkpoint`,
 * `session`), malformed values, a session without an id, a checkpoint or session store that
 * is not one. The run fails at `run_started` with the UserError, before any model request
 * (with `checkAgentGraph` for the agents).
 * @throws UserError
 */
export function validateRunOptions(input: unknown, options: RunOptions): void {
  checkOptionKeys(options, RUN_OPTION_KEYS, 'run');
  normaliseInput(input);
  if (options.checkpoint !== undefined) checkCheckpoint(options.checkpoint);
  if (options.session !== undefined) checkSession(options.session);
  if (options.runId !== undefined && (typeof options.runId !== 'string' || options.runId === '')) throw new UserError(`runId must be a non-empty string, got ${JSON.stringify(options.runId)}.`);
  if (options.contextPolicy !== undefined) resolvePolicy(options.contextPolicy);
  if (options.instructions !== undefined && typeof options.instructions !== 'string') throw new UserError(`instructions must be a string, got ${typeof options.instructions}.`);
  if (options.extra !== undefined) givenExtra(options.extra);
  if (options.maxConcurrentToolCalls !== undefined && (!Number.isInteger(options.maxConcurrentToolCalls) || options.maxConcurrentToolCalls < 1)) {
    throw new UserError(`maxConcurrentToolCalls must be a positive integer, got ${String(options.maxConcurrentToolCalls)}.`);
  }
  if (options.steeringMode !== undefined && options.steeringMode !== 'all' && options.steeringMode !== 'one-at-a-time') {
    throw new UserError(`steeringMode must be "all" or "one-at-a-time", got ${JSON.stringify(options.steeringMode)}.`);
  }
  if (options.maxTurns !== undefined && (!Number.isInteger(options.maxTurns) || options.maxTurns < 1)) {
    throw new UserError(`maxTurns must be a positive integer, got ${String(options.maxTurns)}.`);
  }
  if (options.approvalTimeoutMs !== undefined && !(Number.isFinite(options.approvalTimeoutMs) && options.approvalTimeoutMs >= 0)) {
    throw new UserError(`approvalTimeoutMs must be a non-negative number, got ${String(options.approvalTimeoutMs)}.`);
  }
  if (options.budget !== undefined) checkBudget(options.budget);
  if (options.on !== undefined) new RunSubscribers(options.on);
}


/** @throws UserError for a checkpoint option that cannot work (checked before the run claims anything). */
function checkCheckpoint(checkpoint: CheckpointOptions): void {
  checkOptionKeys(checkpoint, CHECKPOINT_KEYS, 'checkpoint');
  const { store, runId, ifRunExists, owner, leaseMs, claimWaitMs } = checkpoint;
  if (!isStore(store, ['append', 'load'])) throw new UserError(`checkpoint.store must be a CheckpointStore (with append and load), got ${storeText(store)}.`);
  if (runId !== undefined && (typeof runId !== 'string' || runId === '')) throw new UserError(`checkpoint.runId must be a non-empty string, got ${JSON.stringify(runId)}.`);
  if (ifRunExists !== undefined && !IF_RUN_EXISTS.includes(ifRunExists)) {
    throw new UserError(`checkpoint.ifRunExists must be one of ${IF_RUN_EXISTS.map((m) => `"${m}"`).join(', ')}, got ${JSON.stringify(ifRunExists)}.`);
  }
  if (ifRunExists === 'restart' && typeof store.delete !== 'function') throw new UserError('ifRunExists: "restart" needs a checkpoint store that can delete runs.');
  if (owner !== undefined && (typeof owner !== 'string' || owner === '')) throw new UserError(`checkpoint.owner must be a non-empty string, got ${JSON.stringify(owner)}.`);
  if (leaseMs !== undefined && !(typeof leaseMs === 'number' && Number.isFinite(leaseMs) && leaseMs > 0)) throw new UserError(`checkpoint.leaseMs must be a positive number, got ${String(leaseMs)}.`);
  if (claimWaitMs !== undefined && !(typeof claimWaitMs === 'number' && Number.isFinite(claimWaitMs) && claimWaitMs >= 0)) {
    throw new UserError(`checkpoint.claimWaitMs must be a non-negative number, got ${String(claimWaitMs)}.`);
  }
}

/** @throws UserError for a session without an id or a store (found now, not when the session is written at the end). */
function checkSession(session: NonNullable<RunOptions['session']>): void {
  checkOptionKeys(session, SESSION_KEYS, 'session');
  if (!isStore(session.store, ['history', 'append'])) throw new UserError(`session.store must be a Session (with history and append), got ${storeText(session.store)}.`);
  if (typeof session.id !== 'string' || session.id === '') throw new UserError(`session.id must be a non-empty string, got ${session.id === undefined ? 'undefined' : JSON.stringify(session.id)}.`);
}

function isStore(value: unknown, methods: readonly string[]): value is Record<string, (...args: unknown[]) => unknown> {
  return typeof value === 'object' && value !== null && methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');
}

function storeText(value: unknown): string {
  if (typeof value === 'object' && value !== null) return 'an object without them';
  return value === undefined ? 'undefined' : JSON.stringify(value) ?? String(value);
}

/**
 * Where and how a durable run is logged. The run claims `runId`'s lease before it reads or
 * writes anything and renews it while it runs; a run whose lease another owner holds fails
 * with RunLocked and writes nothing.
 */
export interface CheckpointOptions {
  readonly store: CheckpointStore;
  /** Default: the run's id. */
  readonly runId?: string;
  /**
   * When the store already holds the run: "resume" (default) continues it, "restart" deletes
   * it first (even a damaged one), "fail" refuses with a UserError, "resume_only" continues it
   * and refuses with a UserError when there is none. A refusal writes nothing.
   */
  readonly ifRunExists?: 'resume' | 'restart' | 'fail' | 'resume_only';
  /**
   * Lease owner (default: this process's identity plus a nonce, one per run handle, see
   * `leaseOwner`; a tree's sub-runs share it). A custom owner string can never be proved
   * dead, so after a crash its lease is waited for (`claimWaitMs`), not taken over.
   */
  readonly owner?: string;
  /** Lease time in ms (default 30,000), renewed every third of it. Another process may take the run once it expires. */
  readonly leaseMs?: number;
  /**
   * How long the claim waits for another owner's lease to run out before failing with
   * RunLocked (default 0: at once). An owner that provably died on this machine is taken
   * over at once without waiting; any other holder (another machine, a live or paused
   * process) is waited for, said by a `lease_waiting` event and a log line on stderr.
   */
  readonly claimWaitMs?: number;
  /**
   * Park the run (`run_suspended`, stored status "suspended", lease released) as soon as it
   * only waits (approvals, questions, external events, times): nothing is left running in the
   * process. Resolve the waits from any process (`Runner.decide`, `Runner.answer`,
   * `Runner.signal`; a timer needs nothing), then continue with `Runner.resume` (or let
   * `troupe worker` pick the run up).
   */
  readonly suspendOnWait?: boolean;
}
