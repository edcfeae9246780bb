import type { ToolSchema } from '../tools/tool.js';
import type { Message, ReasoningPart, ToolCallRequest, Usage } from '../types.js';

export interface ModelSettings {
  temperature?: number;
  maxTokens?: number;
  /** Whether the model may request several tool calls in one reply. */
  parallelToolCalls?: boolean;
  providerOptions?: Record<string, unknown>;
}

export interface ModelRequest {
  /** The run asking (a sub-run has its own id). Stable for the whole run, handoffs included. */
  readonly runId?: string;
  readonly agent: string;
  readonly system: string;
  /**
   * The live transcript, or with a `contextPolicy` its compacted view (an array the run
   * extends in place too); copy it if you keep it past the call.
   */
  readonly messages: readonly Message[];
  readonly tools: readonly ToolSchema[];
  readonly settings: ModelSettings;
  readonly signal: AbortSignal;
  /**
   * The agent's outputType as JSON Schema: the final reply should be JSON matching it.
   * Models with `supportsResponseFormat` pass it to the provider; for the others troupe also
   * states it in the system prompt.
   */
  readonly responseFormat?: { readonly type: 'json'; readonly schema: Record<string, unknown>; readonly name?: string };
  /**
   * How many leading `messages` are the session's history (earlier runs); this run's own
   * messages, its input first, follow them. Set only when `messages` is the run's whole
   * transcript, not a compacted or hook-shaped view. A model that keeps per-run state in
   * memory (ScriptedModel) reads it to pick up a run resumed in a new process.
   */
  readonly historyLength?: number;
}

export type ModelStreamPart =
  | { readonly type: 'text_delta'; readonly delta: string }
  | { readonly type: 'reasoning_delta'; readonly delta: string }
  /**
   * One finished reasoning block with the provider's metadata (signature, encrypted or
   * redacted content). Its text, if any, was already streamed as `reasoning_delta`s. A reply
   * whose blocks carry metadata keeps them (`AssistantMessage.reasoningParts`) for the next request.
   */
  | { readonly type: 'reasoning_part'; readonly part: ReasoningPart }
  | { readonly type: 'tool_call'; readonly call: ToolCallRequest }
  | { readonly type: 'finish'; readonly usage?: Partial<Usage>; readonly finishReason?: string }
  /**
   * The attempt that streamed the parts so far failed and another attempt follows: every
   * delta and call since the request (or the last `discard`) is void. `attempt` is the failed
   * attempt's number (1 = the first); `reason` says why, e.g. the provider error's message.
   */
  | { readonly type: 'discard'; readonly attempt: number; readonly reason: string };

/** Where a model sends content parts as parts rather than as their text projection. */
export interface ContentPartSupport {
  /** Tool results with images/files (e.g. Anthropic, Gemini); false sends the projection as text. */
  readonly toolResults: boolean;
  /** User messages with images/files. */
  readonly userInput: boolean;
}

/** The model port: every vendor adapter and the scripted model implement this. */
export interface Model {
  readonly name: string;
  /** The provider takes `request.responseFormat` itself (so the schema is not repeated in the system prompt). */
  readonly supportsResponseFormat?: boolean;
  /**
   * Which messages this model sends to its provider with their content parts (images,
   * files); for the others it sends `content`, the parts' text projection. Absent: none
   * (a model that reads only `content` sees the projection, which is always there).
   */
  readonly contentParts?: ContentPartSupport;
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
}
