import { describe, expect, it } from 'vitest';
import { Agent, BudgetExceeded, ModelError, Runner, type Model, type ModelStreamPart, type RunEvent } from '../../src/index.js';
import { aiSdkModel } from '../../src/entry/ai-sdk.js';
import { checkedUsage } from '../../src/models/usage.js';
import { collect } from '../helpers.js';
import { fakeLanguageModel } from './fake-language-model.js';

/** A custom model (the Model port) that answers "ok" and reports the given usage. */
function reporting(usage: unknown): Model {
  return {
    name: 'custom',
    async *stream(): AsyncIterable<ModelStreamPart> {
      yield { type: 'text_delta', delta: 'ok' };
      yield { type: 'finish', usage: usage as never, finishReason: 'stop' };
    },
  };
}

async function failure(model: Model): Promise<Error> {
  const events = await collect(Runner.stream(new Agent({ name: 'a', model }), 'hi', { budget: { maxInputTokens: 100 } }));
  const last = events.at(-1) as Extract<RunEvent, { type: 'run_failed' }>;
  expect(last.type).toBe('run_failed');
  return last.error;
}

describe('model usage is validated', () => {
  it.each([
    [{ inputTokens: Number.NaN }, "Model 'custom' reported invalid usage: inputTokens is number NaN; expected a non-negative integer."],
    [{ inputTokens: 3, outputTokens: -5 }, "Model 'custom' reported invalid usage: outputTokens is number -5; expected a non-negative integer."],
    [{ totalTokens: 1.5 }, "Model 'custom' reported invalid usage: totalTokens is number 1.5; expected a non-negative integer."],
    [{ inputTokens: '12' }, 'Model \'custom\' reported invalid usage: inputTokens is the string "12"; expected a non-negative integer.'],
    [{ inputTokens: Number.POSITIVE_INFINITY }, "Model 'custom' reported invalid usage: inputTokens is number Infinity; expected a non-negative integer."],
    [{ requests: { n: 1 } }, 'Model \'custom\' reported invalid usage: requests is object {"n":1}; expected a non-negative integer.'],
    ['lots', 'Model \'custom\' reported usage that is not an object: the string "lots".'],
  ])('%j fails the run with a ModelError naming the field and value', async (usage, message) => {
    const error = await failure(reporting(usage));
    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toBe(message);
  });

  it('a budget cannot be bypassed with a negative count: the run fails instead of spending less', async () => {
    const error = await failure(reporting({ inputTokens: -1_000_000, outputTokens: 1 }));
    expect(error).not.toBeInstanceOf(BudgetExceeded);
    expect(error.message).toBe("Model 'custom' reported invalid usage: inputTokens is number -1000000; expected a non-negative integer.");
  });

  it('missing and null counts are "not reported"; valid counts pass unchanged', async () => {
    expect(checkedUsage(undefined, 'm')).toEqual({});
    expect(checkedUsage({ inputTokens: null, outputTokens: 4, extra: 'ignored' }, 'm')).toEqual({ outputTokens: 4 });
    const result = await Runner.run(new Agent({ name: 'a', model: reporting({ inputTokens: 7, outputTokens: 2, totalTokens: 9 }) }), 'hi');
    expect(result.usage).toEqual({ inputTokens: 7, outputTokens: 2, totalTokens: 9, requests: 1 });
  });

  it('the AI SDK adapter passes a provider\'s malformed count on, so it fails the same way', async () => {
    const provider = fakeLanguageModel([
      {
        parts: [
          { type: 'text-delta', id: 't', delta: 'ok' },
          { type: 'finish', usage: { inputTokens: { total: Number.NaN, noCache: undefined, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 2, text: 2, reasoning: undefined } }, finishReason: { unified: 'stop', raw: 'stop' } },
        ],
      },
    ]);
    const error = await failure(aiSdkModel(provider));
    expect(error).toBeInstanceOf(ModelError);
    expect(error.message).toBe("Model 'fake.chat:fake-model' reported invalid usage: inputTokens is number NaN; expected a non-negative integer.");
  });
});
