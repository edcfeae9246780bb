/**
 * The public face of the AI SDK adapter: the language model it takes and its options. Written
 * out here rather than imported from `@ai-sdk/provider`, so that troupe's declarations fit
 * AI SDK 6 and AI SDK 7 providers alike and need no `@ai-sdk/*` package to type-check.
 */
import type { ContentPartSupport } from './model.js';

/** The AI SDK language-model specifications troupe speaks: `v3` (AI SDK 6) and `v4` (AI SDK 7). */
export const AI_SDK_SPECIFICATIONS = ['v3', 'v4'] as const;
export type AiSdkSpecificationVersion = (typeof AI_SDK_SPECIFICATIONS)[number];

/**
 * An AI SDK language model: what a provider package's `provider(modelId)` or
 * `provider.chatModel(modelId)` returns. `LanguageModelV3` (AI SDK 6 providers,
 * `@ai-sdk/provider` 3.x, e.g. `@ai-sdk/openai-compatible` 2.x) and `LanguageModelV4` (AI SDK 7
 * providers, `@ai-sdk/provider` 4.x, e.g. `@ai-sdk/openai-compatible` 3.x) both fit. troupe
 * calls only `doStream`, with the call options of the model's own specification.
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: AiSdkSpecificationVersion;
  /** e.g. "openai.chat", "ollama.chat". */
  readonly provider: string;
  readonly modelId: string;
  // `never`: any provider's call-options type is accepted here; the adapter builds the
  // options of the model's specification version.
  doStream(options: never): PromiseLike<{ readonly stream: ReadableStream<unknown> }>;
}

/** Provider options keyed by provider name, as the AI SDK passes them: `{ openai: { parallelToolCalls: false } }`. */
export type AiSdkProviderOptions = Record<string, Record<string, unknown>>;

/** Maps `settings.parallelToolCalls` to provider options; undefined = the provider has no such switch. */
export type ParallelToolCallsMapper = (enabled: boolean, model: AiSdkLanguageModel) => AiSdkProviderOptions | undefined;

export interface AiSdkModelOptions {
  /** Model name in errors and traces. Default `<provider>:<modelId>`, e.g. "ollama.chat:llama3.1". */
  name?: string;
  /**
   * Extra attempts for retryable failures (429, 408, 409, 5xx, network). Default 2. An attempt
   * that fails after it streamed output is retried too: the stream first yields a `discard`
   * part (the run emits `output_discarded`), so consumers drop the voided deltas.
   */
  maxRetries?: number;
  /** Backoff base: the wait before retry n is drawn from [b/2, b] with b = min(maxRetryDelayMs, initialRetryDelayMs·2^(n-1)). Default 500. */
  initialRetryDelayMs?: number;
  /** Default 10,000. */
  maxRetryDelayMs?: number;
  /** A server's `retry-after` up to this many ms is honoured instead of the backoff. Default 60,000. */
  maxRetryAfterMs?: number;
  /** Jitter source in [0, 1); default Math.random. */
  random?: () => number;
  /** How `settings.parallelToolCalls` reaches the provider; see `defaultParallelToolCalls`. */
  parallelToolCalls?: ParallelToolCallsMapper;
  /** Provider options sent with every call; `settings.providerOptions` override them per key. */
  providerOptions?: AiSdkProviderOptions;
  /** Extra HTTP headers for every call. */
  headers?: Record<string, string>;
  /**
   * Which messages go to the provider with their images/files (else as their text
   * projection). Default: user input always; tool results for the anthropic, google, vertex
   * and bedrock providers (`defaultContentParts`). Set it when you know your provider better.
   */
  contentParts?: Partial<ContentPartSupport>;
}

/**
 * Known switches for "one tool call per reply": OpenAI (`parallelToolCalls`), Anthropic
 * (`disableParallelToolUse`) and the openai-compatible family, whose unknown provider
 * options pass into the request body as they are (`parallel_tool_calls`). Other
 * providers: undefined (pass the switch in `settings.providerOptions` yourself).
 */
export const defaultParallelToolCalls: ParallelToolCallsMapper = (enabled, model): AiSdkProviderOptions | undefined => {
  const family = model.provider.split('.')[0]!.trim();
  if (family === 'openai' || family === 'azure') return { openai: { parallelToolCalls: enabled } };
  if (family === 'anthropic') return { anthropic: { disableParallelToolUse: !enabled } };
  const optionsName = (model as { providerOptionsName?: unknown }).providerOptionsName;
  if (typeof optionsName === 'string' && optionsName !== '') return { [optionsName]: { parallel_tool_calls: enabled } };
  return undefined;
};
