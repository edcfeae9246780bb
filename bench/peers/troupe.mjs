/**
 * troupe adapter: the compiled production build in node_modules/.troupe-bench (what
 * `npm run bench` runs; plain node conditions, so XState's production build), driven through
 * its public API: Agent, tool, Runner.run, and a hand-written Model over the shared FakeScript.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { FakeScript, FINAL_TEXT, TOOL_NAME } from './fake-model.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// TROUPE_BENCH_BUILD: another compiled troupe (e.g. an older commit) to compare against, same layout.
const build = process.env.TROUPE_BENCH_BUILD ?? join(root, 'node_modules/.troupe-bench');
const { Agent, Runner, tool } = await import(pathToFileURL(join(build, 'src/index.js')).href);
// The project's own zod, by the same file URL troupe's compiled code resolves, so both share one
// module instance (a bare 'zod' here would find bench/peers/node_modules/zod, pi-ai's copy).
const zodPkg = createRequire(join(root, 'package.json')).resolve('zod/package.json');
const { z } = await import(pathToFileURL(join(dirname(zodPkg), 'index.js')).href);

export const name = 'troupe';

const resultId = (m) => (m.role === 'tool' && m.content === 'ok' ? m.callId : undefined);

/**
 * The fake model as a class: one shared `stream` method, per-run state in a field. Not an object
 * literal with its own `async *stream` per run: on V8 every new generator function gets its own
 * initial map and prototype in old space, which hold the function (and so its closure, here the
 * script and the run it serves) past every scavenge until the next full GC. Models in troupe
 * (AiSdkModel, ScriptedModel) are classes for the same reason; pi's fake is a plain closure.
 */
class FakeModel {
  name = 'fake';
  constructor(script) {
    this.script = script;
  }
  async *stream(request) {
    const reply = this.script.next(request.messages, resultId);
    if (reply.text) yield { type: 'text_delta', delta: reply.text };
    for (const call of reply.calls) yield { type: 'tool_call', call };
    yield { type: 'finish', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, finishReason: reply.calls.length ? 'tool-calls' : 'stop' };
  }
}

const params = z.object({});
const noop = tool({ name: TOOL_NAME, description: 'Does nothing.', parameters: params, execute: () => 'ok' });

/** A no-op that first waits for `hold()` (W4's memory pass keeps runs alive with it). */
function heldTool(hold) {
  return tool({ name: TOOL_NAME, description: 'Does nothing.', parameters: params, execute: async () => { await hold(); return 'ok'; } });
}

/**
 * One run on a fresh agent and fake model.
 * @param {number[]} turns @param {{ stamps?: number[], hold?: () => Promise<void> }} [options]
 */
export async function run(turns, options = {}) {
  const script = new FakeScript(turns, options.stamps);
  const agent = new Agent({ name: 'bench', model: new FakeModel(script), tools: [options.hold ? heldTool(options.hold) : noop] });
  const result = await Runner.run(agent, 'go', { maxTurns: turns.length });
  if (result.output !== FINAL_TEXT) throw new Error(`troupe: unexpected output ${JSON.stringify(result.output)}`);
  script.assertDone();
}
