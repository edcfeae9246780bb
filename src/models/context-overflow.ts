import { ModelError } from '../errors.js';

/**
 * The request did not fit the model's context window, also after `contextPolicy` compacted
 * what the model is sent (or there is no contextPolicy to compact it). `cause` is what the
 * provider said.
 */
export class ContextOverflowError extends ModelError {
  override readonly code = 'CONTEXT_OVERFLOW';
}

/** Error codes providers use for "the prompt is longer than the context window". */
const OVERFLOW_CODES = new Set(['context_length_exceeded', 'string_above_max_length', 'request_too_large', 'exceed_context_size_error', 'model_context_window_exceeded']);

/**
 * What providers say (OpenAI and compatible servers such as vLLM, Azure, Anthropic, Google,
 * AWS Bedrock, Mistral, Groq, Ollama and llama.cpp). Lower-cased text is matched.
 */
const OVERFLOW_PATTERNS: readonly RegExp[] = [
  /maximum context length/, // OpenAI, vLLM, OpenRouter: "This model's maximum context length is 8192 tokens"
  /context[ _]length[ _]exceeded/, // OpenAI code in the body, LM Studio
  /context window/, // "exceeds the context window", "model_context_window_exceeded"
  /prompt is too long/, // Anthropic: "prompt is too long: 213456 tokens > 200000 maximum"
  /input is too long/, // AWS Bedrock: "Input is too long for requested model"
  /input token count.*exceeds the maximum/, // Google: "The input token count (X) exceeds the maximum number of tokens allowed (Y)"
  /too many tokens/,
  /exceeds? (?:the )?(?:available )?context(?: size| length)?/, // llama.cpp: "the request exceeds the available context size"
  /reduce the length of the messages/, // Groq, OpenAI
  /too large for model with \d+ maximum context length/, // Mistral
  /prompt too long/, // Ollama and others
];

/**
 * True when `error` (or one of its causes) is a provider's context-overflow answer: an HTTP
 * 413, a known error code, or a known message in the error or its response body. Rate
 * limits ("tokens per minute") are not overflows.
 */
export function isContextOverflow(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (typeof e !== 'object' && typeof e !== 'string') return false;
    if (typeof e === 'object') {
      const fields = e as { statusCode?: unknown; status?: unknown; code?: unknown; type?: unknown; message?: unknown; responseBody?: unknown; error?: unknown };
      if (fields.statusCode === 413 || fields.status === 413) return true;
      for (const code of [fields.code, fields.type, (fields.error as { code?: unknown } | undefined)?.code]) {
        if (typeof code === 'string' && OVERFLOW_CODES.has(code.toLowerCase())) return true;
      }
      for (const text of [fields.message, fields.responseBody, (fields.error as { message?: unknown } | undefined)?.message]) {
        if (typeof text === 'string' && overflowText(text)) return true;
      }
    } else if (overflowText(e)) return true;
  }
  return false;
}

function overflowText(text: string): boolean {
  const lower = text.toLowerCase();
  if (/per minute|rate limit|\btpm\b/.test(lower)) return false;
  return OVERFLOW_PATTERNS.some((pattern) => pattern.test(lower));
}
