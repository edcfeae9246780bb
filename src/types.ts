/** Transcript, usage and event types shared by every layer. */
import type { WaitView } from './waits/wait-types.js';
import type { SignalledWaitKind } from './waits/kinds/records.js';
import type { ContentPart, ProviderMetadata, ReasoningPart } from './message-parts.js';

export type { ContentPart, FilePart, ImagePart, ProviderMetadata, ReasoningPart, TextPart } from './message-parts.js';

/** A tool call as the model requested it; `arguments` is the raw JSON text. */
export interface ToolCallRequest {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
  /** The provider's data about the call (e.g. a Gemini thought signature), sent back with it. */
  readonly providerMetadata?: ProviderMetadata;
}

export interface UserMessage {
  readonly role: 'user';
  /** The text; with `parts`, their text projection (media as placeholders). */
  readonly content: string;
  /** Text and image/file parts, when the message has media. */
  readonly parts?: readonly ContentPart[];
}

export interface AssistantMessage {
  readonly role: 'assistant';
  readonly content: string;
  /** All reasoning text of the reply. */
  readonly reasoning?: string;
  /** The reasoning blocks with their provider metadata (signatures, redacted content), sent back on the next request. */
  readonly reasoningParts?: readonly ReasoningPart[];
  readonly toolCalls: readonly ToolCallRequest[];
  /** Name of the agent that produced this message. */
  readonly agent: string;
}

export interface ToolResultMessage {
  readonly role: 'tool';
  readonly callId: string;
  readonly name: string;
  /** What the model sees; with `parts`, their text projection (for models without media support). */
  readonly content: string;
  readonly isError: boolean;
  /** Text and image/file parts the tool returned (`toolResult({ content: [...] })`). */
  readonly parts?: readonly ContentPart[];
}

/**
 * App-defined message roles, by declaration merging (pi-agent-core's CustomAgentMessages):
 * `declare module 'troupe' { interface CustomMessageRoles { note: true; ui_event: true } }`
 * makes `{ role: 'note', content }` a `Message`. (Without it, `customMessage()` makes one.)
 */
// eslint-disable-next-line @typescript-eslint/no-empty-interface
export interface CustomMessageRoles {}

/** A role the model does not know: a key of CustomMessageRoles (never one of system, user, assistant, tool). */
export type CustomRole = Extract<keyof CustomMessageRoles, string>;

/**
 * A message of a role the model does not know (a note, a UI event, …; CubePi's and
 * pi-agent-core's custom messages). It lives in the transcript, the log and the session like
 * any message; what the model sees of it is decided by `convertToModel` (by default nothing:
 * it is dropped from every model request). `data` is JSON for the application.
 */
export interface CustomMessage<Role extends string = CustomRole> {
  readonly role: Role;
  readonly content: string;
  readonly data?: unknown;
}

/** A transcript message: the three roles models know, and custom ones. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage | CustomMessage;

/** A message a model is sent (what convertToModel leaves of the transcript). */
export type ModelMessage = UserMessage | AssistantMessage | ToolResultMessage;

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  /** Number of model requests. */
  requests: number;
}

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 };
}

export function addUsage(into: Usage, add: Partial<Usage>): void {
  const input = add.inputTokens ?? 0;
  const output = add.outputTokens ?? 0;
  into.inputTokens += input;
  into.outputTokens += output;
  into.totalTokens += add.totalTokens ?? input + output;
  into.requests += add.requests ?? 0;
}

export interface Budget {
  maxInputTokens?: number;
  maxOutputTokens?: number;
  maxTotalTokens?: number;
  maxToolCalls?: number;
  maxDurationMs?: number;
}

/** Fields every event carries. `path` lists agent names from the root run down. */
interface EventBase {
  readonly runId: string;
  readonly path: readonly string[];
  readonly agent: string;
}

interface ToolEventBase extends EventBase {
  readonly turn: number;
  /** The call that runs: the model's, or what a resolveToolCall hook resolved it to (the model's id kept). */
  readonly call: ToolCallRequest;
  /** Set when a resolveToolCall hook resolved the call: the call as the model sent it. */
  readonly requested?: ToolCallRequest;
}

/**
 * A message of a run's input; system messages add to the run's instructions. A user message
 * may give its content as parts (text and images/files), e.g. `[{ type: 'text', text }, { type: 'image', data, mediaType }]`.
 */
export type InputMessage = { readonly role: 'system'; readonly content: string } | Message | CustomMessage<string> | { readonly role: 'user'; readonly content: readonly ContentPart[] };

/** A run's input: one user message as text, or a conversation. */
export type RunInputValue = string | readonly InputMessage[];

export interface RunStartedEvent extends EventBase { readonly type: 'run_started'; readonly input: RunInputValue }
/** A user message joined the transcript before a model request: steered by the caller, a follow-up, or a tool's mailbox post. */
export interface UserMessageInjectedEvent extends EventBase {
  readonly type: 'user_message_injected';
  readonly turn: number;
  /** A user message, or a custom-role message the caller steered (`handle.steer(customMessage(…))`). */
  readonly message: UserMessage | CustomMessage;
  /** steer / follow_up: the caller; mailbox: a tool; hook: afterModelResponse or onRunEnd; repair: the outputType repair turn. */
  readonly source: 'steer' | 'follow_up' | 'mailbox' | 'hook' | 'repair';
  /** The id `handle.steer()` / `handle.followUp()` returned (mailbox posts have none). */
  readonly id?: string;
}
export interface TurnStartedEvent extends EventBase { readonly type: 'turn_started'; readonly turn: number }
export interface TextDeltaEvent extends EventBase { readonly type: 'text_delta'; readonly turn: number; readonly delta: string }
export interface ReasoningDeltaEvent extends EventBase { readonly type: 'reasoning_delta'; readonly turn: number; readonly delta: string }
export interface MessageCompletedEvent extends EventBase {
  readonly type: 'message_completed';
  readonly turn: number;
  readonly message: AssistantMessage;
  readonly usage: Usage;
}
export interface ApprovalRequiredEvent extends ToolEventBase {
  readonly type: 'approval_required';
  /** Unique in the run tree; decide with `handle.approvals.approve(approvalId)`. `runId` is the run that waits. */
  readonly approvalId: string;
  /** Parsed, validated arguments the tool would receive. */
  readonly args: unknown;
  /** Decides this call (and only this one); `edits.args` replaces its arguments (validated again). A decision after the call was decided otherwise does nothing. */
  approve(edits?: { args: unknown }): void;
  /** Denies this call; the model sees `reason` in the call's error result. */
  reject(reason?: string): void;
}
export interface ToolCallStartedEvent extends ToolEventBase { readonly type: 'tool_call_started' }
/**
 * A tool (askHuman without a channel, or askFromTool/confirmFromTool in its body) asks a person;
 * answer with `handle.humans.answer(requestId, answer)`. With `form`, several keyed questions
 * are asked at once (`question` is the form's title) and the answer is an object by key.
 */
export interface HumanRequestEvent extends ToolEventBase {
  readonly type: 'human_request';
  readonly requestId: string;
  readonly question: string;
  readonly options?: readonly string[];
  readonly multiSelect: boolean;
  readonly form?: readonly { readonly key: string; readonly question: string; readonly options?: readonly string[]; readonly multiSelect: boolean }[];
}
/** The person answered (a string, an array of options for a multi-select, or a form's answers by key with null for a cancelled question). */
export interface HumanAnswerEvent extends ToolEventBase {
  readonly type: 'human_answer';
  readonly requestId: string;
  readonly answer: string | readonly string[] | { readonly [key: string]: string | readonly string[] | null };
}
/**
 * A call waits for an external event or a point in time (its tool returned `waitForEvent` or
 * `waitUntil`): `detail` is `{ name }` or `{ until }`. Resolve an event wait with
 * `handle.signal(name, payload)` (or any wait with `handle.waits.resolve(waitId, resolution)`).
 */
export interface WaitOpenedEvent extends ToolEventBase {
  readonly type: 'wait_opened';
  readonly waitId: string;
  readonly kind: SignalledWaitKind;
  readonly detail: Readonly<Record<string, unknown>>;
  /** Epoch ms the wait ends undecided (event: its timeout; timer: when it fires); undefined: never. */
  readonly deadline: number | undefined;
}
/** Such a wait ended: resolved (`resolution`: the event's payload, or `{ at }` for a timer) or timed out. */
export interface WaitResolvedEvent extends ToolEventBase {
  readonly type: 'wait_resolved';
  readonly waitId: string;
  readonly kind: SignalledWaitKind;
  readonly timedOut: boolean;
  readonly resolution?: unknown;
}
export interface ToolCallProgressEvent extends ToolEventBase { readonly type: 'tool_call_progress'; readonly progress: unknown }
/** One attempt failed; `willRetry` tells whether another attempt follows. */
export interface ToolCallFailedEvent extends ToolEventBase {
  readonly type: 'tool_call_failed';
  readonly error: Error;
  readonly attempt: number;
  readonly willRetry: boolean;
}
export interface ToolCallCompletedEvent extends ToolEventBase {
  readonly type: 'tool_call_completed';
  /** Raw value the tool returned (undefined for errors and truncated output). */
  readonly result: unknown;
  /** The string the model sees (with `parts`: their text projection). */
  readonly output: string;
  /** The content parts of the result, when the tool returned some. */
  readonly parts?: readonly ContentPart[];
  readonly isError: boolean;
  readonly details: unknown;
  readonly terminate: boolean;
  /** Set when a beforeToolCall hook blocked the call: its reason. */
  readonly blockedBy?: string;
}
/**
 * A model attempt's output is void (its deltas included): the provider failed after it had
 * streamed and the attempt is retried (`attempt` set), or afterModelResponse asked for a retry.
 * Comes before any delta of the next attempt; drop every delta of this turn received before it.
 */
export interface OutputDiscardedEvent extends EventBase {
  readonly type: 'output_discarded';
  readonly turn: number;
  readonly reason: string;
  /** The failed provider attempt (1 = the first); absent for an afterModelResponse retry. */
  readonly attempt?: number;
  /** What is void: the text, reasoning and complete tool calls the attempt had produced. */
  readonly voided: { readonly text: string; readonly reasoning: string; readonly toolCalls: readonly ToolCallRequest[] };
}
/**
 * contextPolicy compacted what the model is sent (the transcript is unchanged). Call ids
 * name the results offloaded (now a preview; `recall_tool_result` returns them), cleared
 * (now a marker) and summarised (their calls and results are inside the summary message).
 * Token counts are troupe's estimate of the request before and after.
 */
export interface ContextCompactedEvent extends EventBase {
  readonly type: 'context_compacted';
  readonly turn: number;
  /** threshold: the estimate passed the policy's limit; overflow: the provider refused the request as too long (it is retried once). */
  readonly reason: 'threshold' | 'overflow';
  readonly stages: readonly ('offload' | 'clear' | 'summarize')[];
  readonly offloaded: readonly string[];
  readonly cleared: readonly string[];
  readonly summarized: readonly string[];
  /** Transcript messages newly inside the summary. */
  readonly summarizedMessages: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}
export interface CheckpointSavedEvent extends EventBase { readonly type: 'checkpoint_saved'; readonly turn: number; readonly entries: number }
/**
 * A durable run's stored log is leased to another owner whose process is not provably gone
 * (another machine, or still running): the run waits (at most `checkpoint.claimWaitMs`) for
 * that lease to expire before it claims the run. Comes before `run_started`; a log line says
 * the same. A provably dead owner on this machine is taken over at once, without this event.
 */
export interface LeaseWaitingEvent extends EventBase {
  readonly type: 'lease_waiting';
  /** The lease holder. */
  readonly owner: string;
  /** When its lease expires (milliseconds since the epoch). */
  readonly expiresAt: number;
}
export interface HandoffOccurredEvent extends EventBase { readonly type: 'handoff_occurred'; readonly from: string; readonly to: string; readonly turn: number }
export interface TurnEndedEvent extends EventBase { readonly type: 'turn_ended'; readonly turn: number; readonly usage: Usage }
export interface RunCompletedEvent extends EventBase { readonly type: 'run_completed'; readonly output: string; readonly usage: Usage; readonly turns: number }
export interface RunFailedEvent extends EventBase { readonly type: 'run_failed'; readonly error: Error; readonly usage: Usage; readonly turns: number }
/**
 * The run parked while only approvals wait (stored status "suspended", lease released, nothing
 * left running). It ends the stream; decide with `Runner.decide`, continue with `Runner.resume`.
 */
export interface RunSuspendedEvent extends EventBase {
  readonly type: 'run_suspended';
  readonly turn: number;
  /** The approvals among the waits it parked on. */
  readonly approvals: readonly SuspendedApproval[];
  /** Every wait it parked on (approvals, questions, events, timers): resolve them, then `Runner.resume`. */
  readonly waits: readonly WaitView[];
  readonly usage: Usage;
}
/**
 * A run-level event subscriber (`RunOptions.on`, `handle.on`) threw, or its promise rejected,
 * while handling an event: the handler is skipped, the run goes on unchanged. `runId`, `path`
 * and `agent` are those of the event it was handling, `eventType` its type, `subscribedTo` the
 * key the handler was registered under (that type or '*'). Comes just before that event in the
 * stream (subscribers see each event before the stream does); for an async handler, when its
 * promise rejects (dropped once the stream has ended).
 */
export interface SubscriberFailedEvent extends EventBase {
  readonly type: 'subscriber_failed';
  readonly eventType: RunEventType;
  readonly subscribedTo: RunEventType | '*';
  readonly error: Error;
}
/** An approval a suspended run waits for. */
export interface SuspendedApproval {
  readonly approvalId: string;
  readonly callId: string;
  readonly tool: string;
  /** The call's raw argument text, as the model sent it. */
  readonly arguments: string;
  readonly requestedAt: number;
}

export type RunEvent =
  | RunStartedEvent
  | TurnStartedEvent
  | UserMessageInjectedEvent
  | TextDeltaEvent
  | ReasoningDeltaEvent
  | MessageCompletedEvent
  | OutputDiscardedEvent
  | ContextCompactedEvent
  | ApprovalRequiredEvent
  | ToolCallStartedEvent
  | HumanRequestEvent
  | HumanAnswerEvent
  | WaitOpenedEvent
  | WaitResolvedEvent
  | ToolCallProgressEvent
  | ToolCallFailedEvent
  | ToolCallCompletedEvent
  | CheckpointSavedEvent
  | LeaseWaitingEvent
  | HandoffOccurredEvent
  | TurnEndedEvent
  | RunCompletedEvent
  | RunFailedEvent
  | RunSuspendedEvent
  | SubscriberFailedEvent;

export type RunEventType = RunEvent['type'];
