/**
 * The shapes of the UI message stream troupe emits (the AI SDK's chunks, troupe's metadata
 * and data parts) and the mapper's options: types only, kept apart from the mapper.
 */
import type { WireRunEvent } from '../inspect/wire.js';
import type { RunEventType } from '../types.js';

/**
 * The AI SDK 6 UI message stream chunks troupe emits (`UIMessageChunk` of the `ai` package,
 * protocol `x-vercel-ai-ui-message-stream: v1`). Declared here, structurally, so troupe needs
 * no `ai` dependency; every variant is assignable to `ai`'s `UIMessageChunk` (checked by tsc
 * in test/server/ui-stream.test.ts).
 */
export type UIMessageChunk =
  | { type: 'start'; messageId?: string; messageMetadata?: TroupeMessageMetadata }
  | { type: 'start-step' }
  | { type: 'finish-step' }
  | { type: 'text-start'; id: string }
  | { type: 'text-delta'; id: string; delta: string }
  | { type: 'text-end'; id: string }
  | { type: 'reasoning-start'; id: string }
  | { type: 'reasoning-delta'; id: string; delta: string }
  | { type: 'reasoning-end'; id: string }
  | { type: 'tool-input-available'; toolCallId: string; toolName: string; input: unknown; toolMetadata: TroupeToolMetadata }
  | { type: 'tool-approval-request'; approvalId: string; toolCallId: string }
  | { type: 'tool-output-available'; toolCallId: string; output: unknown }
  | { type: 'tool-output-error'; toolCallId: string; errorText: string }
  | { type: 'tool-output-denied'; toolCallId: string }
  | { type: 'data-troupe-event'; id?: string; data: WireRunEvent }
  | { type: 'data-troupe-discarded'; data: TroupeDiscardedData }
  | { type: 'data-troupe-message'; data: TroupeCustomMessageData }
  | { type: 'error'; errorText: string }
  | { type: 'abort'; reason?: string }
  | { type: 'finish'; finishReason: 'stop' | 'error'; messageMetadata?: TroupeMessageMetadata };

/** `message.metadata` of the assistant message: set by `start`, completed by `finish`. */
export type TroupeMessageMetadata = {
  /** The root run (also the message id). */
  runId: string;
  agent?: string;
  status?: 'completed' | 'failed' | 'cancelled';
  usage?: { inputTokens: number; outputTokens: number; totalTokens: number; requests: number };
  turns?: number;
  error?: { name: string; code: string | null; message: string };
};

/**
 * `data-troupe-discarded`: a root model attempt was voided (`output_discarded`). A client
 * drops the text and reasoning parts listed in `partIds` (already closed); the next
 * attempt's deltas open new parts.
 */
export type TroupeDiscardedData = {
  runId: string;
  turn: number;
  /** The failed provider attempt; absent for an afterModelResponse retry. */
  attempt?: number;
  reason: string;
  partIds: string[];
};

/**
 * `data-troupe-message`: a message of a custom role (a note, a UI event) joined the root run's
 * transcript (`user_message_injected`); the model does not see it unless convertToModel rewrites it.
 */
export type TroupeCustomMessageData = {
  runId: string;
  turn: number;
  role: string;
  content: string;
  data?: unknown;
};

/** `toolMetadata` of every tool part: where the call ran. */
export type TroupeToolMetadata = {
  /** The run that made the call: the root run or a sub-run (`<parent>/<turn>.<index>`). */
  runId: string;
  /** The model's own call id (not unique: models repeat ids across turns and sub-runs). */
  callId: string;
  turn: number;
  agent: string;
  path: string[];
  /** For a sub-run's call: the tool part of the parent call that started the sub-run. */
  parentToolCallId?: string;
  /** A resolveToolCall hook resolved the call: the part is the tool that ran; this is the call as the model sent it (arguments: its JSON text). */
  requested?: { toolName: string; arguments: string };
};

export interface UIChunkOptions {
  /**
   * Which troupe events also become `data-troupe-event` parts (see the README mapping):
   * `'all'` (default), `'none'`, or a list of event types.
   */
  readonly dataEvents?: 'all' | 'none' | readonly RunEventType[];
}

/** A waiting call as the runtime lists it (`PendingApproval`, JSON-safe). */
export interface OpenedApproval {
  readonly approvalId: string;
  readonly runId: string;
  readonly callId: string;
  readonly tool: string;
  readonly args: unknown;
  readonly turn: number;
  readonly agent: string;
  readonly path: readonly string[];
}
