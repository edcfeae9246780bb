/** W1 alone in a loop, for `node --cpu-prof` (see bench/README in the note). */
import { z } from 'zod';
import { Agent, Runner, tool } from '../src/index.js';
import { ScriptedModel, batch, text } from '../src/entry/testing.js';

const noop = tool({ name: 'noop', description: 'Does nothing.', parameters: z.object({}), execute: () => 'ok' });
const reply = batch(Array.from({ length: 100 }, (_, i) => ['noop', {}, `c${i}`] as const));
const reps = Number(process.argv[2] ?? 3000);
for (let i = 0; i < reps; i++) {
  const model = new ScriptedModel([reply, text('done')], { record: false });
  await Runner.run(new Agent({ name: 'w1', model, tools: [noop] }), 'go');
}
