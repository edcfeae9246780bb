import type { LanguageModelV3, LanguageModelV3CallOptions, LanguageModelV3StreamPart } from '@ai-sdk/provider';

/** One scripted doStream call: parts to stream, optionally ending in a stream error, or a thrown error. */
export type FakeStep =
  | { readonly parts: readonly LanguageModelV3StreamPart[]; readonly error?: unknown }
  | { readonly throws: unknown };

export interface FakeLanguageModel extends LanguageModelV3 {
  readonly calls: LanguageModelV3CallOptions[];
  /** How many of the returned streams were cancelled by the consumer. */
  cancelled: number;
}

/** An in-memory LanguageModelV3 that replays scripted stream parts. */
export function fakeLanguageModel(steps: FakeStep[], options: { provider?: string; modelId?: string; extra?: object } = {}): FakeLanguageModel {
  const queue = [...steps];
  const model: FakeLanguageModel = {
    specificationVersion: 'v3',
    provider: options.provider ?? 'fake.chat',
    modelId: options.modelId ?? 'fake-model',
    supportedUrls: {},
    calls: [],
    cancelled: 0,
    doGenerate: () => Promise.reject(new Error('doGenerate is not used')),
    doStream: async (callOptions) => {
      model.calls.push(callOptions);
      const step = queue.shift();
      if (!step) throw new Error('fake model: no scripted step left');
      if ('throws' in step) throw step.throws;
      let index = 0;
      // Pull-based, so an error only surfaces after the parts before it were read.
      const stream = new ReadableStream<LanguageModelV3StreamPart>({
        pull(controller) {
          const part = step.parts[index++];
          if (part) controller.enqueue(part);
          else if (step.error !== undefined) controller.error(step.error);
          else controller.close();
        },
        cancel() {
          model.cancelled++;
        },
      });
      return { stream };
    },
    ...options.extra,
  };
  return model;
}

export const usage = (input: number | undefined, output: number | undefined) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

export const finish = (unified: 'stop' | 'tool-calls' | 'length' = 'stop', input: number | undefined = 10, output: number | undefined = 5): LanguageModelV3StreamPart => ({
  type: 'finish',
  usage: usage(input, output),
  finishReason: { unified, raw: unified === 'tool-calls' ? 'tool_calls' : unified },
});
