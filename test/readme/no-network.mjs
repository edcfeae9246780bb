// Preloaded (`node --import`) into every README block run: no network. fetch() to the local
// Ollama address the examples use answers like an OpenAI-compatible server with a small
// script (tool calls for `add`, then a text answer); any other http(s) request throws.
const OLLAMA = 'http://localhost:11434/v1/chat/completions';
const realFetch = globalThis.fetch;

const base = { id: 'chatcmpl-readme', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'qwen3:8b' };
const chunk = (delta, finishReason = null) => ({ ...base, choices: [{ index: 0, delta, finish_reason: finishReason }] });
const usage = (prompt, completion) => ({ ...base, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } });

/** The reply to one chat request: first the two additions, then the answer. */
function reply(body) {
  if (body.messages.some((m) => m.role === 'tool')) {
    return [chunk({ role: 'assistant', content: '2+3 = 5 ' }), chunk({ content: 'and 40+2 = 42.' }), chunk({}, 'stop'), usage(60, 12)];
  }
  const calls = [['call_1', { a: 2, b: 3 }], ['call_2', { a: 40, b: 2 }]].map(([id, args], index) =>
    chunk({ tool_calls: [{ index, id, type: 'function', function: { name: 'add', arguments: JSON.stringify(args) } }] }),
  );
  return [chunk({ role: 'assistant', content: null }), ...calls, chunk({}, 'tool_calls'), usage(40, 20)];
}

globalThis.fetch = async (input, init) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
  if (url === OLLAMA) {
    const body = JSON.parse(init?.body ?? (await input.text()));
    const sse = reply(body).map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n';
    return new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } });
  }
  if (/^https?:\/\/(127\.0\.0\.1|localhost)(:\d+)?\//.test(url) && url !== OLLAMA && !url.startsWith('http://localhost:11434/')) return realFetch(input, init);
  throw new Error(`README examples run without network: fetch(${url}) refused`);
};
