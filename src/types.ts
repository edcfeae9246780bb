/** Transcript, usage and event types shared by every layer. */

/** A tool call as the model requested it; `arguments` is the raw JSON text. */
export interface ToolCallRequest {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

export interface UserMessage {
  readonly role: 'user';
  readonly content: string;
}

export interface AssistantMessage {
  readonly role: 'assistant';
  readonly content: string;
  readonly reasoning?: string;
  readonly toolCalls: readonly ToolCallRequest[];
  /** Name of the agent that produced this message. */
  readonly agent: string;
}

export interface ToolResultMessage {
  readonly role: 'tool';
  readonly callId: string;
  readonly name: string;
  readonly content: string;
  readonly isError: boolean;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

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
  readonly call: ToolCallRequest;
}

/** A message of a run's input; system messages add to the run's instructions. */
export type InputMessage = { readonly role: 'system'; readonly content: string } | Message;

/** A run's input: one user message as text, or a conversation. */
export type RunInputValue = string | readonly InputMessage[];

export interface RunStartedEvent extends EventBase { readonly type: 'run_started'; readonly input: RunInputValue }
/** A user message joined the transcript before a model request: steered by the caller, a follow-up, or a tool's mailbox post. */
export interface UserMessageInjectedEvent extends EventBase {
  readonly type: 'user_message_injected';
  readonly turn: number;
  readonly message: UserMessage;
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
/** A tool (askHuman without a channel) asks a person; answer with `handle.humans.answer(requestId, answer)`. */
export interface HumanRequestEvent extends ToolEventBase {
  readonly type: 'human_request';
  readonly requestId: string;
  readonly question: string;
  readonly options?: readonly string[];
  readonly multiSelect: boolean;
}
/** The person answered (a string, or an array of options for a multi-select). */
export interface HumanAnswerEvent extends ToolEventBase { readonly type: 'human_answer'; readonly requestId: string; readonly answer: string | readonly string[] }
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
  /** The string the model sees. */
  readonly output: string;
  readonly isError: boolean;
  readonly details: unknown;
  readonly terminate: boolean;
  /** Set when a beforeToolCall hook blocked the call: its reason. */
  readonly blockedBy?: string;
}
/** A model attempt's output is void (its deltas included): e.g. afterModelResponse asked for a retry. */
export interface OutputDiscardedEvent extends EventBase { readonly type: 'output_discarded'; readonly turn: number; readonly reason: string }
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
export interface HandoffOccurredEvent extends EventBase { readonly type: 'handoff_occurred'; readonly from: string; readonly to: string; readonly turn: number }
export interface TurnEndedEvent extends EventBase { readonly type: 'turn_ended'; readonly turn: number; readonly usage: Usage }
export interface RunCompletedEvent extends EventBase { readonly type: 'run_completed'; readonly output: string; readonly usage: Usage; readonly turns: number }
export interface RunFailedEvent extends EventBase { readonly type: 'run_failed'; readonly error: Error; readonly usage: Usage; readonly turns: number }

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
  | ToolCallProgressEvent
  | ToolCallFailedEvent
  | ToolCallCompletedEvent
  | CheckpointSavedEvent
  | HandoffOccurredEvent
  | TurnEndedEvent
  | RunCompletedEvent
  | RunFailedEvent;

export type RunEventType = RunEvent['type'];
