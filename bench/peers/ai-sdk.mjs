/**
 * Vercel AI SDK adapter (`ai` 6.x): `generateText` with one zod tool and `stopWhen:
 * stepCountIs(requests)`, so the SDK loops model → tools → model until the text reply, over a
 * hand-written `LanguageModelV3` (the provider spec of `@ai-sdk/provider` 3.x) wrapping the
 * shared FakeScript. `ToolLoopAgent.generate` is a thin layer over the same `generateText`.
 *
 * Two ways to drive it, two adapters here, each its own framework id in frameworks.mjs (so each
 * gets its own fresh process):
 * - `ai-sdk` (default): `generateText`, the model's `doGenerate`. Like troupe's `Runner.run` and
 *   pi's `agent.prompt`: the caller awaits the result and reads no stream.
 * - `ai-sdk-stream` (opt-in): `streamText`, the model's `doStream` (a ReadableStream of stream
 *   parts), the whole text stream consumed by the caller (`await result.text` after
 *   `consumeStream()`). What a chat UI does; its like-for-like in troupe is `Runner.stream`,
 *   which this bench does not time.
 */
import { generateText, stepCountIs, streamText, tool, zodSchema } from 'ai';
import { z } from 'zod';
import { FakeScript, FINAL_TEXT, TOOL_NAME } from './fake-model.mjs';

/**
 * The results of one turn's calls are parts of ONE `tool` message at the end of the prompt, so
 * the fake checks that message's parts (O(1) per request, not a flattened transcript).
 */
function lastResults(prompt) {
  const last = prompt.at(-1);
  return last?.role === 'tool' ? last.content : prompt;
}
const resultId = (part) =>
  part.type === 'tool-result' && part.output?.type === 'text' && part.output.value === 'ok' ? part.toolCallId : undefined;

function usage() {
  return {
    inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: 1, text: 1, reasoning: undefined },
  };
}

/**
 * The fake `LanguageModelV3`. A class (one shared method per kind, per-run state in a field),
 * as troupe's adapter does, so that no per-run function object outlives the run.
 * `doGenerate` answers with fresh content parts: tool calls carry `input` as JSON text, as the
 * spec requires; the SDK parses and validates it. `doStream` enqueues the parts a provider
 * emits when a reply arrives in one chunk, synchronously in `start`, the cheapest a provider can be.
 * (Implements `LanguageModelV3` of `@ai-sdk/provider`.)
 */
class FakeLanguageModel {
  specificationVersion = 'v3';
  provider = 'fake';
  modelId = 'fake';
  supportedUrls = {};
  constructor(script) {
    this.script = script;
  }

  async doGenerate(options) {
    const reply = this.script.next(lastResults(options.prompt), resultId);
    const content = [];
    if (reply.text) content.push({ type: 'text', text: reply.text });
    for (const call of reply.calls) content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments });
    const calls = reply.calls.length > 0;
    return { content, finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: calls ? 'tool_calls' : 'stop' }, usage: usage(), warnings: [] };
  }

  async doStream(options) {
    const reply = this.script.next(lastResults(options.prompt), resultId);
    const calls = reply.calls.length > 0;
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue({ type: 'stream-start', warnings: [] });
        if (reply.text) {
          controller.enqueue({ type: 'text-start', id: 'text' });
          controller.enqueue({ type: 'text-delta', id: 'text', delta: reply.text });
          controller.enqueue({ type: 'text-end', id: 'text' });
        }
        for (const call of reply.calls) {
          controller.enqueue({ type: 'tool-input-start', id: call.id, toolName: call.name });
          controller.enqueue({ type: 'tool-input-delta', id: call.id, delta: call.arguments });
          controller.enqueue({ type: 'tool-input-end', id: call.id });
          controller.enqueue({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: call.arguments });
        }
        controller.enqueue({ type: 'finish', usage: usage(), finishReason: { unified: calls ? 'tool-calls' : 'stop', raw: calls ? 'tool_calls' : 'stop' } });
        controller.close();
      },
    });
    return { stream };
  }
}

/**
 * The zod schema wrapped once in the SDK's own `zodSchema()`: given a bare zod object, the SDK
 * wraps it anew at every step and so converts it to JSON Schema at every step (measured: a
 * one-call run costs about 2.5× as much); the wrapper keeps the converted schema.
 */
const inputSchema = zodSchema(z.object({}));
const noopTools = { [TOOL_NAME]: tool({ description: 'Does nothing.', inputSchema, execute: () => 'ok' }) };

/** A no-op that first waits for `hold()` (W4's memory pass keeps runs alive with it). */
function heldTools(hold) {
  return { [TOOL_NAME]: tool({ description: 'Does nothing.', inputSchema, execute: async () => { await hold(); return 'ok'; } }) };
}

function settings(turns, options) {
  const script = new FakeScript(turns, options.stamps);
  return {
    script,
    call: {
      model: new FakeLanguageModel(script),
      tools: options.hold ? heldTools(options.hold) : noopTools,
      prompt: 'go',
      // At most one step per scripted request; the script's text reply ends the loop itself.
      stopWhen: stepCountIs(turns.length),
    },
  };
}

function check(text, script) {
  if (text !== FINAL_TEXT) throw new Error(`ai-sdk: unexpected output ${JSON.stringify(text)}`);
  script.assertDone();
}

/** `generateText`: one run on a fresh fake model. */
export const generate = {
  name: 'ai-sdk',
  /** @param {number[]} turns @param {{ stamps?: number[], hold?: () => Promise<void> }} [options] */
  async run(turns, options = {}) {
    const { script, call } = settings(turns, options);
    check((await generateText(call)).text, script);
  },
};

/** `streamText`, its stream consumed to the end: one run on a fresh fake model. */
export const stream = {
  name: 'ai-sdk-stream',
  /** @param {number[]} turns @param {{ stamps?: number[], hold?: () => Promise<void> }} [options] */
  async run(turns, options = {}) {
    const { script, call } = settings(turns, options);
    // streamText reports errors to onError (default: console.error) and in the stream, not by
    // rejecting; keep the first so a failed check fails the run, as in the other adapters.
    let failure;
    const result = streamText({ ...call, onError: ({ error }) => { failure ??= error; } });
    await result.consumeStream();
    if (failure) throw failure;
    check(await result.text, script);
  },
};
