import type { ToolSchema } from '../tools/tool.js';
import type { Message, ToolCallRequest, Usage } from '../types.js';

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
}

export type ModelStreamPart =
  | { readonly type: 'text_delta'; readonly delta: string }
  | { readonly type: 'reasoning_delta'; readonly delta: string }
  | { readonly type: 'tool_call'; readonly call: ToolCallRequest }
  | { readonly type: 'finish'; readonly usage?: Partial<Usage>; readonly finishReason?: string };

/** The model port: every vendor adapter and the scripted model implement this. */
export interface Model {
  readonly name: string;
  /** The provider takes `request.responseFormat` itself (so the schema is not repeated in the system prompt). */
  readonly supportsResponseFormat?: boolean;
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
}
