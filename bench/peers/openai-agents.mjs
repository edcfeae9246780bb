/**
 * OpenAI Agents SDK adapter (`@openai/agents-core`): its `Agent`, `tool` (zod parameters) and
 * one shared `Runner` (`runner.run(agent, 'go', { maxTurns })`, not streamed), over a
 * hand-written `Model` (the SDK's model interface: `getResponse` / `getStreamedResponse`)
 * wrapping the shared FakeScript. A non-streamed run calls `getResponse` once per turn.
 *
 * Tracing, two adapters (each its own framework id in frameworks.mjs, so its own process):
 * - `openai-agents` (default): what `@openai/agents` sets up on import, tracing on with one
 *   `BatchTraceProcessor` (traces and spans are built per run, turn and call, queued, and
 *   exported in batches from a timer), whose exporter here drops each batch instead of posting
 *   it to api.openai.com: `@openai/agents`' exporter does exactly that (it logs an error and
 *   skips) when no OpenAI key is set, the case of a user on another provider. (agents-core alone
 *   would print every trace to the console, which no production user keeps.)
 * - `openai-agents-notrace` (opt-in): `setTracingDisabled(true)`, the documented switch
 *   (also the env variable OPENAI_AGENTS_DISABLE_TRACING=1): no trace or span objects at all.
 */
import { Agent, BatchTraceProcessor, Runner, Usage, setTraceProcessors, setTracingDisabled, tool } from '@openai/agents-core';
import { z } from 'zod';
import { FakeScript, FINAL_TEXT, TOOL_NAME } from './fake-model.mjs';

const resultId = (item) =>
  item.type === 'function_call_result' && item.output?.type === 'text' && item.output.text === 'ok' ? item.callId : undefined;

/**
 * The fake `Model`, a class as in the other adapters (no per-run function object outlives the
 * run). Each reply is fresh output items as the SDK's OpenAI Responses model returns them:
 * `function_call` items with `arguments` as JSON text (the SDK parses and validates it), or
 * one assistant `message` with an `output_text` part.
 * (Implements the SDK's `Model` interface.)
 */
class FakeModel {
  constructor(script) {
    this.script = script;
  }

  async getResponse(request) {
    // The SDK sends the whole transcript as a flat item list: the previous turn's results are
    // its last items (the first request's input is the string 'go').
    const reply = this.script.next(typeof request.input === 'string' ? [] : request.input, resultId);
    const output = [];
    if (reply.text) {
      output.push({ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text }] });
    }
    for (const call of reply.calls) {
      output.push({ type: 'function_call', id: call.id, callId: call.id, name: call.name, arguments: call.arguments, status: 'completed' });
    }
    return { usage: new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 }), output };
  }

  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error('openai-agents: the bench runs are not streamed');
  }
}

const parameters = z.object({});
const noop = tool({ name: TOOL_NAME, description: 'Does nothing.', parameters, execute: () => 'ok' });

/** A no-op that first waits for `hold()` (W4's memory pass keeps runs alive with it). */
function heldTool(hold) {
  return tool({ name: TOOL_NAME, description: 'Does nothing.', parameters, execute: async () => { await hold(); return 'ok'; } });
}

const runner = new Runner();

/**
 * One run on a fresh agent and fake model (an agent is cheap config, as in troupe's adapter).
 * @param {number[]} turns @param {{ stamps?: number[], hold?: () => Promise<void> }} [options]
 */
async function run(turns, options = {}) {
  const script = new FakeScript(turns, options.stamps);
  const agent = new Agent({ name: 'bench', model: new FakeModel(script), tools: [options.hold ? heldTool(options.hold) : noop] });
  const result = await runner.run(agent, 'go', { maxTurns: turns.length });
  if (result.finalOutput !== FINAL_TEXT) throw new Error(`openai-agents: unexpected output ${JSON.stringify(result.finalOutput)}`);
  script.assertDone();
}

/** An exporter that drops each batch, as `@openai/agents`' OpenAI exporter does without a key. */
const droppingExporter = { export: async () => undefined };

export const traced = {
  name: 'openai-agents',
  setup() {
    setTraceProcessors([new BatchTraceProcessor(droppingExporter)]);
  },
  run,
};

export const untraced = {
  name: 'openai-agents-notrace',
  setup() {
    setTracingDisabled(true);
  },
  run,
};
