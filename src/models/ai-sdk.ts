import type {
  JSONObject,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import type { ToolSchema } from '../tools/tool.js';
import type { Message, Usage } from '../types.js';
import type { ContentPartSupport, Model, ModelRequest, ModelSettings, ModelStreamPart } from './model.js';
import { ReasoningBlocks, assistantContent, defaultContentParts, metadataOf, toolResultOutput, userContent } from './ai-sdk-parts.js';
import { StreamErrorPart, toProviderError } from './provider-error.js';

/** Maps `settings.parallelToolCalls` to provider options; undefined = the provider has no such switch. */
export type ParallelToolCallsMapper = (enabled: boolean, model: LanguageModelV3) => SharedV3ProviderOptions | undefined;

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
  providerOptions?: SharedV3ProviderOptions;
  /** Extra HTTP headers for every call. */
  headers?: Record<string, string>;
  /**
   * Which messages go to the provider with their images/files (else as their text
   * projection). Default: user input always; tool results for the anthropic, google, vertex
   * and bedrock providers (`defaultContentParts`). Set it when you know your provider better.
   */
  contentParts?: Partial<ContentPartSupport>;
}

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
 * A troupe Model over any AI SDK provider (LanguageModelV3 spec): `@ai-sdk/openai`,
 * `@ai-sdk/anthropic`, `@ai-sdk/openai-compatible` (Ollama, vLLM, llama.cpp server), …
 */
export function aiSdkModel(languageModel: LanguageModelV3, options: AiSdkModelOptions = {}): Model {
  return new AiSdkModel(languageModel, options);
}

export class AiSdkModel implements Model {
  readonly name: string;
  /** Passed on as the v3 call's `responseFormat`; providers without native JSON mode degrade as the AI SDK does. */
  readonly supportsResponseFormat = true;
  readonly contentParts: ContentPartSupport;
  private readonly maxRetries: number;

  constructor(
    readonly languageModel: LanguageModelV3,
    private readonly options: AiSdkModelOptions = {},
  ) {
    checkOptionKeys(options, AI_SDK_OPTION_KEYS, 'aiSdkModel');
    const version = (languageModel as { specificationVersion?: unknown } | undefined)?.specificationVersion;
    if (version !== 'v3') {
      throw new UserError(
        `aiSdkModel needs an AI SDK LanguageModelV3 (specificationVersion 'v3'), got ${version === undefined ? 'no specificationVersion' : `'${String(version)}'`}. Use a provider package built for AI SDK 6 (@ai-sdk/provider 3.x).`,
      );
    }
    const retries = options.maxRetries ?? 2;
    if (!Number.isInteger(retries) || retries < 0) throw new UserError(`aiSdkModel: maxRetries must be a non-negative integer, got ${String(retries)}.`);
    this.maxRetries = retries;
    this.name = options.name ?? `${languageModel.provider}:${languageModel.modelId}`;
    this.contentParts = { ...defaultContentParts(languageModel), ...options.contentParts };
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const callOptions = toCallOptions(request, this.languageModel, this.options, this.contentParts);
    const { signal } = request;
    for (let attempt = 1; ; attempt++) {
      let streamed = false;
      try {
        const { stream } = await this.languageModel.doStream(callOptions);
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

// ---------------------------------------------------------------------------------------
// Stream translation

interface PendingInput {
  readonly id: string;
  readonly name: string;
  text: string;
  ended: boolean;
}

/**
 * Turns provider stream parts into troupe parts. Tool calls are emitted once each when
 * complete: on a `tool-call` part, or (for providers that only stream tool inputs) for
 * every `tool-input-end` that no `tool-call` followed, before `finish`.
 */
export class StreamTranslator {
  private readonly inputs = new Map<string, PendingInput>();
  private readonly reasoning = new ReasoningBlocks();
  private readonly emitted = new Set<string>();
  private finished = false;

  push(part: LanguageModelV3StreamPart): ModelStreamPart[] {
    switch (part.type) {
      case 'text-delta':
        return part.delta === '' ? [] : [{ type: 'text_delta', delta: part.delta }];
      case 'reasoning-start':
        this.reasoning.start(part.id, part.providerMetadata);
        return [];
      case 'reasoning-delta':
        // An empty delta may still carry metadata (e.g. Anthropic's signature).
        this.reasoning.delta(part.id, part.delta, part.providerMetadata);
        return part.delta === '' ? [] : [{ type: 'reasoning_delta', delta: part.delta }];
      case 'reasoning-end':
        return this.reasoning.end(part.id, part.providerMetadata);
      case 'tool-input-start':
        if (!part.providerExecuted) this.inputs.set(part.id, { id: part.id, name: part.toolName, text: '', ended: false });
        return [];
      case 'tool-input-delta': {
        const input = this.inputs.get(part.id);
        if (input) input.text += part.delta;
        return [];
      }
      case 'tool-input-end': {
        const input = this.inputs.get(part.id);
        if (input) input.ended = true;
        return [];
      }
      case 'tool-call': {
        // Provider-executed tools (e.g. a hosted web search) already ran on the provider's side.
        if (part.providerExecuted || this.emitted.has(part.toolCallId)) return [];
        this.emitted.add(part.toolCallId);
        this.inputs.delete(part.toolCallId);
        const providerMetadata = metadataOf(part.providerMetadata);
        const call = { id: part.toolCallId, name: part.toolName, arguments: part.input };
        return [{ type: 'tool_call', call: providerMetadata ? { ...call, providerMetadata } : call }];
      }
      case 'finish': {
        const finishReason = finishReasonOf(part.finishReason);
        const out = [...this.reasoning.flush(), ...this.flushInputs(finishReason === 'length')];
        this.finished = true;
        out.push({ type: 'finish', usage: toUsage(part.usage), finishReason });
        return out;
      }
      case 'error':
        throw new StreamErrorPart(part.error);
      default:
        // stream-start, response-metadata, text start/end, sources, files, raw,
        // provider-executed tool results and approval requests carry nothing troupe uses.
        return [];
    }
  }

  /** The stream ended: flush completed tool inputs if no `finish` part did. */
  end(): ModelStreamPart[] {
    return this.finished ? [] : [...this.reasoning.flush(), ...this.flushInputs()];
  }

  /**
   * `cutOff`: the reply hit the output token limit, so an input that never ended is sent on
   * as it is (its arguments incomplete): the run answers it with a "cut off" error result
   * instead of dropping it. Otherwise a never-ended input is no call.
   */
  private flushInputs(cutOff = false): ModelStreamPart[] {
    const out: ModelStreamPart[] = [];
    for (const input of this.inputs.values()) {
      if ((!input.ended && !cutOff) || this.emitted.has(input.id)) continue;
      this.emitted.add(input.id);
      out.push({ type: 'tool_call', call: { id: input.id, name: input.name, arguments: input.text } });
    }
    this.inputs.clear();
    return out;
  }
}

/**
 * v3 usage ({ inputTokens: { total }, outputTokens: { total } }); flat v2-style numbers are
 * read too. A count that is not a number is passed on as it is, so the model turn rejects it
 * with a ModelError naming the field (instead of the count silently missing from budgets).
 */
export function toUsage(usage: unknown): Partial<Usage> {
  if (typeof usage !== 'object' || usage === null) return {};
  const input = tokenCount((usage as Record<string, unknown>).inputTokens);
  const output = tokenCount((usage as Record<string, unknown>).outputTokens);
  const out: Partial<Usage> = {};
  if (input !== undefined) out.inputTokens = input;
  if (output !== undefined) out.outputTokens = output;
  if (typeof input === 'number' && typeof output === 'number') out.totalTokens = input + output;
  else if (input === undefined && typeof output === 'number') out.totalTokens = output;
  else if (output === undefined && typeof input === 'number') out.totalTokens = input;
  return out;
}

/** The count, undefined when the provider did not report it (the value as it is when it is malformed). */
function tokenCount(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const total = (value as { total?: unknown }).total;
    return total === undefined || total === null ? undefined : (total as number);
  }
  return value as number;
}

function finishReasonOf(reason: unknown): string | undefined {
  if (typeof reason === 'string') return reason;
  if (typeof reason === 'object' && reason !== null) {
    const unified = (reason as { unified?: unknown }).unified;
    if (typeof unified === 'string') return unified;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------
// Request translation

/** Builds the v3 call options for one troupe request. */
export function toCallOptions(
  request: ModelRequest,
  model: LanguageModelV3,
  options: AiSdkModelOptions = {},
  contentParts: ContentPartSupport = { ...defaultContentParts(model), ...options.contentParts },
): LanguageModelV3CallOptions {
  const settings: ModelSettings = request.settings ?? {};
  const call: LanguageModelV3CallOptions = {
    prompt: toPrompt(request.system, request.messages, contentParts),
    abortSignal: request.signal,
  };
  if (request.tools.length > 0) call.tools = request.tools.map(toFunctionTool);
  if (settings.temperature !== undefined) call.temperature = settings.temperature;
  if (settings.maxTokens !== undefined) call.maxOutputTokens = settings.maxTokens;
  const parallel =
    settings.parallelToolCalls !== undefined && request.tools.length > 0
      ? (options.parallelToolCalls ?? defaultParallelToolCalls)(settings.parallelToolCalls, model)
      : undefined;
  const providerOptions = mergeProviderOptions(options.providerOptions, parallel, settings.providerOptions as SharedV3ProviderOptions | undefined);
  if (providerOptions) call.providerOptions = providerOptions;
  if (options.headers) call.headers = { ...options.headers };
  if (request.responseFormat) call.responseFormat = { type: 'json', schema: request.responseFormat.schema as never, ...(request.responseFormat.name ? { name: request.responseFormat.name } : {}) };
  return call;
}

/**
 * Known switches for "one tool call per reply": OpenAI (`parallelToolCalls`), Anthropic
 * (`disableParallelToolUse`) and the openai-compatible family, whose unknown provider
 * options pass into the request body as they are (`parallel_tool_calls`). Other
 * providers: undefined (pass the switch in `settings.providerOptions` yourself).
 */
export const defaultParallelToolCalls: ParallelToolCallsMapper = (enabled, model): SharedV3ProviderOptions | undefined => {
  const family = model.provider.split('.')[0]!.trim();
  if (family === 'openai' || family === 'azure') return { openai: { parallelToolCalls: enabled } };
  if (family === 'anthropic') return { anthropic: { disableParallelToolUse: !enabled } };
  const optionsName = (model as { providerOptionsName?: unknown }).providerOptionsName;
  if (typeof optionsName === 'string' && optionsName !== '') return { [optionsName]: { parallel_tool_calls: enabled } };
  return undefined;
};

/** Later sources win, key by key inside each provider's object. */
function mergeProviderOptions(...sources: Array<SharedV3ProviderOptions | undefined>): SharedV3ProviderOptions | undefined {
  let out: SharedV3ProviderOptions | undefined;
  for (const source of sources) {
    if (!source) continue;
    out ??= {};
    for (const [provider, values] of Object.entries(source)) {
      out[provider] = { ...(out[provider] ?? {}), ...(values as JSONObject) };
    }
  }
  return out;
}

export function toFunctionTool(schema: ToolSchema): LanguageModelV3FunctionTool {
  const tool: LanguageModelV3FunctionTool = {
    type: 'function',
    name: schema.name,
    description: schema.description,
    inputSchema: schema.parameters as LanguageModelV3FunctionTool['inputSchema'],
  };
  if (schema.strict) tool.strict = true;
  return tool;
}

/**
 * troupe transcript → v3 prompt: the system prompt first, assistant turns with their
 * reasoning (blocks with provider metadata when kept), text and tool calls, and consecutive
 * tool results grouped into one tool message (error results as `error-text`). Content parts
 * go as parts where `contentParts` allows, else as their text projection.
 */
export function toPrompt(system: string, messages: readonly Message[], contentParts: ContentPartSupport = { toolResults: true, userInput: true }): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  if (system !== '') prompt.push({ role: 'system', content: system });
  let results: LanguageModelV3ToolResultPart[] | undefined;
  for (const message of messages) {
    if (message.role === 'tool') {
      if (!results) {
        results = [];
        prompt.push({ role: 'tool', content: results });
      }
      results.push({ type: 'tool-result', toolCallId: message.callId, toolName: message.name, output: toolResultOutput(message, contentParts) });
      continue;
    }
    results = undefined;
    if (message.role === 'user') {
      prompt.push({ role: 'user', content: userContent(message, contentParts) });
      continue;
    }
    prompt.push({ role: 'assistant', content: assistantContent(message, parseInput) });
  }
  return prompt;
}

/**
 * Tool-call input for the prompt. Arguments the model sent as broken JSON (which got an
 * error result) are replayed as `{}`, because providers reject non-object inputs.
 */
function parseInput(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}
