/**
 * A LanguageModelV3 that behaves like Anthropic's extended thinking with tools: its first
 * reply streams a signed thinking block (the signature on an empty delta, as
 * @ai-sdk/anthropic sends it), a redacted thinking block (opaque data on the start part) and
 * a tool call. Every later request must send both blocks back, unchanged and in order, in
 * the assistant turn that made the call; otherwise it fails with HTTP 400, as the real API does.
 */
import { APICallError, type LanguageModelV3, type LanguageModelV3CallOptions, type LanguageModelV3StreamPart } from '@ai-sdk/provider';

export const SIGNATURE = 'sig-EqQBCkYIBxgCKkD';
export const REDACTED = 'EmwKAhgBEgy3va3pzix';
export const THINKING = 'The user wants the weather; I should call the tool.';

export interface AnthropicStyleModel extends LanguageModelV3 {
  readonly prompts: LanguageModelV3CallOptions['prompt'][];
}

const usage = { inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 5, text: 5, reasoning: undefined } };

function streamOf(parts: LanguageModelV3StreamPart[]): ReadableStream<LanguageModelV3StreamPart> {
  return new ReadableStream({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });
}

function rejected(message: string): APICallError {
  return new APICallError({
    message,
    url: 'https://api.anthropic.test/v1/messages',
    requestBodyValues: {},
    statusCode: 400,
    responseBody: JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message } }),
    isRetryable: false,
  });
}

/** What is wrong with the thinking blocks sent back in `prompt`, or undefined when they are intact. */
export function thinkingProblem(prompt: LanguageModelV3CallOptions['prompt']): string | undefined {
  const assistant = prompt.find((m) => m.role === 'assistant');
  if (!assistant || assistant.role !== 'assistant') return 'no assistant turn';
  const [first, second, third] = assistant.content;
  if (first?.type !== 'reasoning' || first.text !== THINKING || first.providerOptions?.anthropic?.signature !== SIGNATURE) {
    return 'messages.1.content.0: `thinking` block is missing or its `signature` is invalid';
  }
  if (second?.type !== 'reasoning' || second.text !== '' || second.providerOptions?.anthropic?.redactedData !== REDACTED) {
    return 'messages.1.content.1: `redacted_thinking` block is missing or was changed';
  }
  if (third?.type !== 'tool-call') return 'messages.1.content.2: expected the `tool_use` block after the thinking blocks';
  return undefined;
}

/**
 * `spec: 'v4'` reports itself as an AI SDK 7 model (LanguageModelV4), so the adapter sends the
 * v4 call options; their reasoning and tool-call parts have the v3 shape this model reads.
 */
export function anthropicStyleModel(spec: 'v3' | 'v4' = 'v3'): AnthropicStyleModel {
  const prompts: LanguageModelV3CallOptions['prompt'][] = [];
  return {
    specificationVersion: spec as 'v3',
    provider: 'anthropic.messages',
    modelId: 'claude-test',
    supportedUrls: {},
    prompts,
    doGenerate: () => Promise.reject(new Error('doGenerate is not used')),
    doStream: async (options) => {
      prompts.push(options.prompt);
      const followUp = options.prompt.some((m) => m.role === 'tool');
      if (!followUp) {
        return {
          stream: streamOf([
            { type: 'stream-start', warnings: [] },
            { type: 'reasoning-start', id: '0' },
            { type: 'reasoning-delta', id: '0', delta: THINKING.slice(0, 20) },
            { type: 'reasoning-delta', id: '0', delta: THINKING.slice(20) },
            { type: 'reasoning-delta', id: '0', delta: '', providerMetadata: { anthropic: { signature: SIGNATURE } } },
            { type: 'reasoning-end', id: '0' },
            { type: 'reasoning-start', id: '1', providerMetadata: { anthropic: { redactedData: REDACTED } } },
            { type: 'reasoning-end', id: '1' },
            { type: 'tool-call', toolCallId: 'toolu_1', toolName: 'weather', input: '{"city":"Zürich"}' },
            { type: 'finish', usage, finishReason: { unified: 'tool-calls', raw: 'tool_use' } },
          ]),
        };
      }
      const problem = thinkingProblem(options.prompt);
      if (problem) throw rejected(problem);
      return {
        stream: streamOf([
          { type: 'text-delta', id: 't', delta: 'It is 18 °C in Zürich.' },
          { type: 'finish', usage, finishReason: { unified: 'stop', raw: 'end_turn' } },
        ]),
      };
    },
  };
}
