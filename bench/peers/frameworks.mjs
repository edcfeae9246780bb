/**
 * The frameworks the peer bench knows, by id (the names BENCH_FRAMEWORKS, worker.mjs and
 * profile.mjs take). Each `load()` resolves to an adapter `{ name, run(turns, options),
 * setup?() }`; `pkg` is the npm package whose installed version run.mjs reports (none for troupe,
 * which is this repository); `column` is its short table heading.
 */
export const FRAMEWORKS = {
  troupe: { column: 'troupe', load: () => import('./troupe.mjs') },
  pi: { column: 'pi', pkg: '@mariozechner/pi-agent-core', load: () => import('./pi.mjs') },
  'ai-sdk': { column: 'ai-sdk', pkg: 'ai', load: async () => (await import('./ai-sdk.mjs')).generate },
  'ai-sdk-stream': { column: 'ai-stream', pkg: 'ai', load: async () => (await import('./ai-sdk.mjs')).stream },
  'openai-agents': { column: 'oai-agents', pkg: '@openai/agents-core', load: async () => (await import('./openai-agents.mjs')).traced },
  'openai-agents-notrace': { column: 'oai-notrace', pkg: '@openai/agents-core', load: async () => (await import('./openai-agents.mjs')).untraced },
};

/** What `npm run bench:peers` runs when BENCH_FRAMEWORKS is not set. */
export const DEFAULT_FRAMEWORKS = ['troupe', 'pi', 'ai-sdk', 'openai-agents'];

/**
 * The adapter for `id`, set up and ready to run.
 * @throws {Error} naming the known ids when `id` is not one of them
 */
export async function loadAdapter(id) {
  const entry = FRAMEWORKS[id];
  if (!entry) throw new Error(`unknown framework ${JSON.stringify(id)}; known: ${Object.keys(FRAMEWORKS).join(', ')}`);
  const adapter = await entry.load();
  adapter.setup?.();
  return adapter;
}
