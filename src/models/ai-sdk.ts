import type { LanguageModelV3, LanguageModelV4 } from '@ai-sdk/provider';
import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import { defaultContentParts } from './ai-sdk-parts.js';
import { AI_SDK_SPECIFICATIONS, type AiSdkLanguageModel, type AiSdkModelOptions } from './ai-sdk-options.js';
import { callOptionsFor } from './ai-sdk-request.js';
import { StreamTranslator } from './ai-sdk-stream.js';
import type { ContentPartSupport, Model, ModelRequest, ModelStreamPart } from './model.js';
import { toProviderError } from './provider-error.js';

export {
  defaultParallelToolCalls,
  type AiSdkLanguageModel,
  type AiSdkModelOptions,
  type AiSdkProviderOptions,
  type AiSdkSpecificationVersion,
  type ParallelToolCallsMapper,
} from './ai-sdk-options.js';

const AI_SDK_OPTION_KEYS = optionKeys<AiSdkModelOptions>({
  name: true,
  maxRetries: true,
  initialRetryDelayMs: true,
  maxRetryDelayMs: true,
  maxRetryAfterMs: true,
  random: true,
  parallelToolCalls: true,
  providerOptions: true,
  headers: true,
  contentParts: true,
});

/**
 * A troupe Model over any AI SDK provider, AI SDK 6 (`LanguageModelV3`) or AI SDK 7
 * (`LanguageModelV4`): `@ai-sdk/openai`, `@ai-sdk/anthropic`, `@ai-sdk/openai-compatible`
 * (Ollama, vLLM, llama.cpp server), …
 * @throws UserError when `languageModel` is not a v3 or v4 language model (an AI SDK 5
 * provider is v2), or when `options.maxRetries` is not a non-negative integer.
 */
export function aiSdkModel(languageModel: AiSdkLanguageModel, options: AiSdkModelOptions = {}): Model {
  return new AiSdkModel(languageModel, options);
}

export class AiSdkModel implements Model {
  readonly name: string;
  /** Passed on as the call's `responseFormat`; providers without native JSON mode degrade as the AI SDK does. */
  readonly supportsResponseFormat = true;
  readonly contentParts: ContentPartSupport;
  private readonly maxRetries: number;

  constructor(
    readonly languageModel: AiSdkLanguageModel,
    private readonly options: AiSdkModelOptions = {},
  ) {
    checkOptionKeys(options, AI_SDK_OPTION_KEYS, 'aiSdkModel');
    const version = (languageModel as { specificationVersion?: unknown } | undefined)?.specificationVersion;
    if (!(AI_SDK_SPECIFICATIONS as readonly unknown[]).includes(version)) {
      throw new UserError(
        `aiSdkModel takes an AI SDK language model of specificationVersion 'v3' (AI SDK 6 providers, @ai-sdk/provider 3.x) or 'v4' (AI SDK 7 providers, @ai-sdk/provider 4.x), got ${version === undefined ? 'no specificationVersion' : `'${String(version)}'`}. Use a provider package built for AI SDK 6 or 7.`,
      );
    }
    const retries = options.maxRetries ?? 2;
    if (!Number.isInteger(retries) || retries < 0) throw new UserError(`aiSdkModel: maxRetries must be a non-negative integer, got ${String(retries)}.`);
    this.maxRetries = retries;
    this.name = options.name ?? `${languageModel.provider}:${languageModel.modelId}`;
    this.contentParts = { ...defaultContentParts(languageModel), ...options.contentParts };
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const callOptions = callOptionsFor(request, this.languageModel, this.options, this.contentParts);
    // The options match the model's own specification (callOptionsFor), so this is v3 with v3 or v4 with v4.
    const model = this.languageModel as unknown as { doStream(options: typeof callOptions): ReturnType<(LanguageModelV3 | LanguageModelV4)['doStream']> };
    const { signal } = request;
    for (let attempt = 1; ; attempt++) {
      let streamed = false;
      try {
        const { stream } = await model.doStream(callOptions);
        const reader = stream.getReader();
        const state = new StreamTranslator();
        try {
          for (;;) {
            const next = await reader.read();
            if (next.done) break;
            for (const part of state.push(next.value)) {
              streamed = true;
              yield part;
            }
          }
          for (const part of state.end()) {
            streamed = true;
            yield part;
          }
          return;
        } finally {
          // Stops the HTTP body on errors, aborts and early returns; harmless after the end.
          reader.cancel().catch(() => {});
        }
      } catch (caught) {
        if (signal.aborted) throw signal.reason ?? caught;
        const error = toProviderError(caught, this.languageModel, attempt);
        if (!error.retryable || attempt > this.maxRetries) throw error;
        // Announced before the backoff, so the voided deltas are dropped before new ones arrive.
        if (streamed) yield { type: 'discard', attempt, reason: error.message };
        await sleep(this.retryDelay(attempt, error.retryAfterMs), signal);
      }
    }
  }

  /** The wait before the retry that follows failed attempt `attempt`. */
  retryDelay(attempt: number, retryAfterMs?: number): number {
    return retryDelayMs(attempt, this.options, retryAfterMs);
  }
}

/** Equal-jitter exponential backoff, or the server's retry-after when it is reasonable. */
export function retryDelayMs(attempt: number, options: Pick<AiSdkModelOptions, 'initialRetryDelayMs' | 'maxRetryDelayMs' | 'maxRetryAfterMs' | 'random'>, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined && retryAfterMs <= (options.maxRetryAfterMs ?? 60_000)) return retryAfterMs;
  const base = Math.min(options.maxRetryDelayMs ?? 10_000, (options.initialRetryDelayMs ?? 500) * 2 ** (attempt - 1));
  const random = options.random ?? Math.random;
  return Math.round(base / 2 + random() * (base / 2));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
