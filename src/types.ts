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

export interface RunStartedEvent extends EventBase { readonly type: 'run_started'; readonly input: string }
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
  /** Decides this call (and only this one). A decision after the call was decided otherwise does nothing. */
  approve(): void;
  /** Denies this call; the model sees `reason` in the call's error result. */
  reject(reason?: string): void;
}
export interface ToolCallStartedEvent extends ToolEventBase { readonly type: 'tool_call_started' }
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
}
export interface CheckpointSavedEvent extends EventBase { readonly type: 'checkpoint_saved'; readonly turn: number; readonly entries: number }
export interface HandoffOccurredEvent extends EventBase { readonly type: 'handoff_occurred'; readonly from: string; readonly to: string; readonly turn: number }
export interface TurnEndedEvent extends EventBase { readonly type: 'turn_ended'; readonly turn: number; readonly usage: Usage }
export interface RunCompletedEvent extends EventBase { readonly type: 'run_completed'; readonly output: string; readonly usage: Usage; readonly turns: number }
export interface RunFailedEvent extends EventBase { readonly type: 'run_failed'; readonly error: Error; readonly usage: Usage; readonly turns: number }

export type RunEvent =
  | RunStartedEvent
  | TurnStartedEvent
  | TextDeltaEvent
  | ReasoningDeltaEvent
  | MessageCompletedEvent
  | ApprovalRequiredEvent
  | ToolCallStartedEvent
  | ToolCallProgressEvent
  | ToolCallFailedEvent
  | ToolCallCompletedEvent
  | CheckpointSavedEvent
  | HandoffOccurredEvent
  | TurnEndedEvent
  | RunCompletedEvent
  | RunFailedEvent;

export type RunEventType = RunEvent['type'];
