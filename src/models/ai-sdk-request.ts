/**
 * troupe request → AI SDK call options. Built in the v3 shape; a v4 model gets them through
 * `toV4CallOptions` (ai-sdk-v4.ts), which rewrites the parts whose shape changed.
 */
import type {
  JSONObject,
  LanguageModelV3CallOptions,
  LanguageModelV3FunctionTool,
  LanguageModelV3Prompt,
  LanguageModelV3ToolResultPart,
  LanguageModelV4CallOptions,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import type { ToolSchema } from '../tools/tool.js';
import type { Message } from '../types.js';
import { assistantContent, defaultContentParts, toolResultOutput, userContent } from './ai-sdk-parts.js';
import { defaultParallelToolCalls, type AiSdkLanguageModel, type AiSdkModelOptions, type AiSdkProviderOptions } from './ai-sdk-options.js';
import { toV4CallOptions } from './ai-sdk-v4.js';
import type { ContentPartSupport, ModelRequest, ModelSettings } from './model.js';

/** The call options for `model`'s own specification (v4 for a v4 model, else v3). */
export function callOptionsFor(
  request: ModelRequest,
  model: AiSdkLanguageModel,
  options: AiSdkModelOptions = {},
  contentParts?: ContentPartSupport,
): LanguageModelV3CallOptions | LanguageModelV4CallOptions {
  const v3 = toCallOptions(request, model, options, contentParts);
  return model.specificationVersion === 'v4' ? toV4CallOptions(v3) : v3;
}


/** Builds the v3 call options for one troupe request. */
export function toCallOptions(
  request: ModelRequest,
  model: AiSdkLanguageModel,
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
  const providerOptions = mergeProviderOptions(options.providerOptions, parallel, settings.providerOptions as AiSdkProviderOptions | undefined);
  if (providerOptions) call.providerOptions = providerOptions;
  if (options.headers) call.headers = { ...options.headers };
  if (request.responseFormat) call.responseFormat = { type: 'json', schema: request.responseFormat.schema as never, ...(request.responseFormat.name ? { name: request.responseFormat.name } : {}) };
  return call;
}

/** Later sources win, key by key inside each provider's object. */
function mergeProviderOptions(...sources: Array<AiSdkProviderOptions | undefined>): SharedV3ProviderOptions | undefined {
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
    // A custom-role message never reaches a model (convertToModel drops or rewrites it before the request).
    if (message.role === 'assistant') prompt.push({ role: 'assistant', content: assistantContent(message, parseInput) });
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
