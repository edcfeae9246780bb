import type { APICallError, JSONParseError, TypeValidationError } from '@ai-sdk/provider';
import { ModelError } from '../errors.js';

/**
 * A model provider failed: an HTTP error, a network failure, an error part in the
 * stream or a malformed stream chunk. `retryable` says whether the same request may
 * succeed later (429, 408, 409, 5xx, network failures); the AI SDK adapter retries those
 * itself, also after part of the reply streamed (announced by a `discard` stream part).
 */
export class ProviderError extends ModelError {
  override readonly code: string = 'PROVIDER_ERROR';
  readonly retryable: boolean;
  /** HTTP status, when the provider answered with one. */
  readonly statusCode: number | undefined;
  /** e.g. "openai.chat", "ollama.chat". */
  readonly provider: string;
  readonly modelId: string;
  /** Attempts made, this one included. */
  readonly attempts: number;
  /** What the server asked for in `retry-after` / `retry-after-ms`, in ms. */
  readonly retryAfterMs: number | undefined;
  readonly responseBody: string | undefined;

  constructor(
    message: string,
    options: {
      retryable: boolean;
      provider: string;
      modelId: string;
      attempts?: number;
      statusCode?: number;
      retryAfterMs?: number;
      responseBody?: string;
      cause?: unknown;
    },
  ) {
    super(message, { cause: options.cause });
    this.retryable = options.retryable;
    this.provider = options.provider;
    this.modelId = options.modelId;
    this.attempts = options.attempts ?? 1;
    this.statusCode = options.statusCode;
    this.retryAfterMs = options.retryAfterMs;
    this.responseBody = options.responseBody;
  }
}

/** Error codes of Node and undici that mean "the connection failed", worth another try. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** True when `error` or one of its causes is a network failure. */
export function isNetworkError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    // undici: "fetch failed" (connect) and "terminated" (connection dropped mid-body).
    if (e instanceof TypeError && (e.message === 'fetch failed' || e.message === 'terminated')) return true;
  }
  return false;
}

/** Marks an `error` part that arrived inside the provider's stream. */
export class StreamErrorPart extends Error {
  constructor(readonly error: unknown) {
    super('stream error part');
  }
}

/**
 * True when `error` is the AI SDK error `name`. AI SDK errors carry a marker under
 * `Symbol.for('vercel.ai.error.<name>')`, set by every copy and major version of
 * `@ai-sdk/provider` (its own `isInstance` checks the same), so troupe recognises the errors
 * of AI SDK 6 and 7 providers alike without loading either package.
 */
function isAiSdkError<T>(error: unknown, name: string): error is T {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[Symbol.for(`vercel.ai.error.${name}`)] === true;
}

/** Turns anything a provider threw (or sent as an `error` part) into a ProviderError. */
export function toProviderError(caught: unknown, model: { provider: string; modelId: string }, attempts: number): ProviderError {
  if (caught instanceof ProviderError) return caught;
  const inStream = caught instanceof StreamErrorPart;
  const error = inStream ? caught.error : caught;
  const base = `Model provider '${model.provider}' (model '${model.modelId}')`;
  const after = attempts > 1 ? ` after ${attempts} attempts` : '';
  const common = { provider: model.provider, modelId: model.modelId, attempts, cause: error };

  if (isAiSdkError<JSONParseError>(error, 'AI_JSONParseError')) {
    return new ProviderError(`${base} sent a malformed stream chunk${after}: ${clip(error.text)}`, { ...common, retryable: false });
  }
  if (isAiSdkError<TypeValidationError>(error, 'AI_TypeValidationError')) {
    return new ProviderError(`${base} sent a malformed stream chunk${after}: ${clip(safeJson(error.value))}`, { ...common, retryable: false });
  }
  if (isAiSdkError<APICallError>(error, 'AI_APICallError')) {
    const status = error.statusCode;
    const retryable = error.isRetryable || status === 429 || (status !== undefined && status >= 500) || isNetworkError(error);
    const detail = status !== undefined ? `HTTP ${status}: ${error.message}` : error.message;
    return new ProviderError(`${base} failed${after}: ${detail}`, {
      ...common,
      retryable,
      statusCode: status,
      retryAfterMs: retryAfter(error.responseHeaders),
      responseBody: error.responseBody,
    });
  }
  return new ProviderError(`${base} failed${after}: ${messageOf(error)}`, { ...common, retryable: isNetworkError(error) });
}

/** Reads `retry-after-ms` or `retry-after` (seconds or an HTTP date). */
export function retryAfter(headers: Record<string, string> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = lower['retry-after-ms'];
  if (ms !== undefined && ms.trim() !== '' && Number.isFinite(Number(ms))) return Math.max(0, Number(ms));
  const value = lower['retry-after'];
  if (value === undefined || value.trim() === '') return undefined;
  if (Number.isFinite(Number(value))) return Math.max(0, Number(value) * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  if (typeof error === 'object' && error !== null) {
    const message = (error as { message?: unknown }).message;
    if (typeof message === 'string' && message) return message;
  }
  return safeJson(error);
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function clip(text: string, max = 200): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
