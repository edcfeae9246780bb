/**
 * pi-agent-core adapter: its stateful `Agent` class (the README's entry point) with a custom
 * `streamFn`, so no provider, API key or network is involved. The StreamFn contract is pi-ai's:
 * return an AssistantMessageEventStream and push `start`, content-block events, then `done`.
 * Our fake pushes what a pi-ai provider pushes when a tool call arrives in one chunk:
 * toolcall_start, toolcall_delta (the JSON argument text), toolcall_end (arguments parsed with
 * JSON.parse, as providers do at the end of a block), over one partial message it mutates.
 * Everything is pushed synchronously before returning, the cheapest a provider can be.
 */
import { Agent } from '@mariozechner/pi-agent-core';
import { Type, createAssistantMessageEventStream } from '@mariozechner/pi-ai';
import { FakeScript, FINAL_TEXT, TOOL_NAME } from './fake-model.mjs';

export const name = 'pi-agent-core';

const model = {
  id: 'fake', name: 'fake', api: 'fake', provider: 'fake', baseUrl: '', reasoning: false, input: ['text'],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128_000, maxTokens: 4096,
};

const resultId = (m) => (m.role === 'toolResult' && m.content[0]?.text === 'ok' ? m.toolCallId : undefined);

function usage() {
  return { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

function fakeStream(script) {
  return (requestModel, context) => {
    const stream = createAssistantMessageEventStream();
    const reply = script.next(context.messages, resultId);
    const stopReason = reply.calls.length ? 'toolUse' : 'stop';
    const output = { role: 'assistant', content: [], api: requestModel.api, provider: requestModel.provider, model: requestModel.id, usage: usage(), stopReason, timestamp: Date.now() };
    stream.push({ type: 'start', partial: output });
    if (reply.text) {
      const contentIndex = output.content.push({ type: 'text', text: '' }) - 1;
      stream.push({ type: 'text_start', contentIndex, partial: output });
      output.content[contentIndex].text += reply.text;
      stream.push({ type: 'text_delta', contentIndex, delta: reply.text, partial: output });
      stream.push({ type: 'text_end', contentIndex, content: reply.text, partial: output });
    }
    for (const call of reply.calls) {
      const block = { type: 'toolCall', id: call.id, name: call.name, arguments: {} };
      const contentIndex = output.content.push(block) - 1;
      stream.push({ type: 'toolcall_start', contentIndex, partial: output });
      stream.push({ type: 'toolcall_delta', contentIndex, delta: call.arguments, partial: output });
      block.arguments = JSON.parse(call.arguments);
      stream.push({ type: 'toolcall_end', contentIndex, toolCall: block, partial: output });
    }
    stream.push({ type: 'done', reason: stopReason, message: output });
    stream.end(output);
    return stream;
  };
}

const params = Type.Object({});
const okResult = () => ({ content: [{ type: 'text', text: 'ok' }], details: {} });
const noop = { name: TOOL_NAME, label: 'noop', description: 'Does nothing.', parameters: params, execute: async () => okResult() };

function heldTool(hold) {
  return { ...noop, execute: async () => { await hold(); return okResult(); } };
}

/**
 * One run on a fresh Agent and fake stream (an Agent holds one transcript, so one per run).
 * @param {number[]} turns @param {{ stamps?: number[], hold?: () => Promise<void> }} [options]
 */
export async function run(turns, options = {}) {
  const script = new FakeScript(turns, options.stamps);
  const agent = new Agent({
    initialState: { systemPrompt: '', model, tools: [options.hold ? heldTool(options.hold) : noop] },
    streamFn: fakeStream(script),
  });
  await agent.prompt('go');
  // pi reports failures (including a throw from our stream's check) in state, not by rejecting.
  if (agent.state.errorMessage) throw new Error(`pi-agent-core: ${agent.state.errorMessage}`);
  const last = agent.state.messages.at(-1);
  const text = last?.role === 'assistant' ? last.content.find((c) => c.type === 'text')?.text : undefined;
  if (text !== FINAL_TEXT) throw new Error(`pi-agent-core: unexpected output ${JSON.stringify(text)}`);
  script.assertDone();
}
