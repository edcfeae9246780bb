import { it, expect } from 'vitest';
import { z } from 'zod';
import { Agent, ScriptedModel, batch, text, tool, Runner } from '../../src/index.js';
import { executePath } from './execute-path.js';
import { launchOn, mutantRunMachine } from './harness.js';
import { generatePaths } from './turn-model.js';

const calls = [
  { id: 'Q', gated: false, barrier: false },
  { id: 'P', gated: true, barrier: true },
  { id: 'R', gated: false, barrier: false },
  { id: 'S', gated: true, barrier: false },
  { id: 'T', gated: false, barrier: false },
];
const g = generatePaths(calls);
const mutants: Record<string, any> = {
  haltedToRunAlone_false: { haltedToRunAlone: () => false },
  haltedForApproval_false: { haltedForApproval: () => false },
  nothingInFlight_false: { nothingInFlight: () => false },
};
for (const [name, guards] of Object.entries(mutants)) {
  it(name, async () => {
    let failed = 0; const msgs = new Set<string>();
    for (const p of g.transitionCover) {
      try { await executePath(g.model, calls, p, launchOn(mutantRunMachine(guards)), 'ask'); }
      catch (e) { failed++; msgs.add(`${(e as Error).name}: ${(e as Error).message.split('\n')[0]!.slice(0, 160)}`); }
    }
    console.log(name, failed, '/', g.transitionCover.length, [...msgs].slice(0, 4));
  }, 60000);
}

it('ask handler then consumer leaves', async () => {
  let ran = false;
  const t = tool({ name: 'g', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => { ran = true; return 'x'; } });
  const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([batch([['g', {}, 'G']]), text('done')]), tools: [t], approvalHandler: () => 'ask' }), 'q');
  for await (const e of handle) {
    if (e.type === 'approval_required') break; // leave without deciding
  }
  for (let i = 0; i < 10; i++) await new Promise(r => setTimeout(r, 0));
  console.log('pending after consumer left:', handle.approvals.pending());
  let settled = false; handle.result().then(() => settled = true, () => settled = true);
  for (let i = 0; i < 10; i++) await new Promise(r => setTimeout(r, 0));
  console.log('result settled:', settled, 'ran', ran);
});
it('ask handler, consumer pulled past, then leaves', async () => {
  const t = tool({ name: 'g', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => 'x' });
  const handle = Runner.stream(new Agent({ name: 'a', model: new ScriptedModel([batch([['g', {}, 'G'], ['g', {}, 'H']]), text('done')]), tools: [t], approvalHandler: () => 'ask' }), 'q');
  const it2 = handle[Symbol.asyncIterator]();
  const seen: string[] = [];
  for (;;) { const r = await Promise.race([it2.next(), new Promise<'t'>(r => setTimeout(() => r('t'), 20))]); if (r === 't' || r.done) break; seen.push(r.value.type); }
  console.log('seen', seen, 'pending', handle.approvals.pending());
  await it2.return!();
  for (let i = 0; i < 10; i++) await new Promise(r => setTimeout(r, 0));
  console.log('pending after consumer left:', handle.approvals.pending());
  let settled = false; handle.result().then(() => settled = true, (e) => { settled = true; });
  for (let i = 0; i < 10; i++) await new Promise(r => setTimeout(r, 0));
  console.log('result settled:', settled);
  handle.cancel();
});
