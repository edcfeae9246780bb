import type * as OpenAICompatible from '@ai-sdk/openai-compatible';
import { UserError } from '../errors.js';
import { aiSdkModel, type AiSdkModelOptions } from '../models/ai-sdk.js';
import type { Model } from '../models/model.js';
import { requirePeer } from '../peers.js';

export type Env = Readonly<Record<string, string | undefined>>;

const SUPPORTED = ['openai-compatible'] as const;
const FORMAT = 'TROUPE_MODEL=openai-compatible:<model>';

/**
 * Picks the model for the CLI from environment variables:
 *
 * - `TROUPE_MODEL=openai-compatible:<model>`: any server that speaks the OpenAI
 *   chat-completions API (Ollama, vLLM, llama.cpp server, LM Studio, …). Everything after
 *   the first ':' is the model id, so `openai-compatible:llama3.1:8b` works.
 * - `TROUPE_BASE_URL`: the server's API root, e.g. `http://localhost:11434/v1` (required).
 * - `TROUPE_API_KEY`: sent as `Authorization: Bearer …` (optional).
 *
 * Returns undefined when TROUPE_MODEL is unset or empty (the caller falls back to the
 * scripted model); throws a UserError for anything malformed, and when the provider package
 * (`@ai-sdk/openai-compatible` 2.x or 3.x, an optional peer of troupe) is not installed.
 */
export function modelFromEnv(env: Env = process.env, options: AiSdkModelOptions = {}): Model | undefined {
  const spec = env.TROUPE_MODEL?.trim() ?? '';
  const baseURL = env.TROUPE_BASE_URL?.trim() ?? '';
  if (spec === '') {
    if (baseURL !== '') throw new UserError(`TROUPE_BASE_URL is set but TROUPE_MODEL is not: set ${FORMAT}.`);
    return undefined;
  }
  const colon = spec.indexOf(':');
  if (colon === -1) {
    throw new UserError(`TROUPE_MODEL '${spec}' has no provider: use ${FORMAT}.`);
  }
  const provider = spec.slice(0, colon).trim();
  const modelId = spec.slice(colon + 1).trim();
  if (!(SUPPORTED as readonly string[]).includes(provider)) {
    throw new UserError(`TROUPE_MODEL provider '${provider}' is not supported: use one of ${SUPPORTED.join(', ')} (${FORMAT}).`);
  }
  if (modelId === '') throw new UserError(`TROUPE_MODEL '${spec}' has no model id: use ${FORMAT}.`);
  if (baseURL === '') {
    throw new UserError(`TROUPE_BASE_URL must be set for TROUPE_MODEL=${spec}, e.g. http://localhost:11434/v1 (Ollama) or http://localhost:8000/v1 (vLLM).`);
  }
  let url: URL;
  try {
    url = new URL(baseURL);
  } catch {
    throw new UserError(`TROUPE_BASE_URL '${baseURL}' is not a URL: use e.g. http://localhost:11434/v1.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UserError(`TROUPE_BASE_URL '${baseURL}' must be an http:// or https:// URL.`);
  }
  const apiKey = env.TROUPE_API_KEY?.trim() || undefined;
  // Loaded only here, so that `troupe/ai-sdk` itself needs no provider package.
  const { createOpenAICompatible } = requirePeer<typeof OpenAICompatible>('@ai-sdk/openai-compatible', `TROUPE_MODEL=${provider}:…`);
  const providerFactory = createOpenAICompatible({
    name: 'local',
    baseURL,
    ...(apiKey ? { apiKey } : {}),
    // Ask for usage in the final stream chunk (vLLM and OpenAI only send it when asked).
    includeUsage: true,
  });
  return aiSdkModel(providerFactory.chatModel(modelId), options);
}
