/**
 * One workload in a loop through a peers adapter, for `node --cpu-prof`:
 *   node --cpu-prof bench/peers/profile.mjs <framework> w0|w1|w3|w4 [reps]
 * (<framework>: an id of frameworks.mjs, e.g. troupe, pi, ai-sdk, openai-agents)
 * (run `npm run bench:peers` once first: it compiles troupe into node_modules/.troupe-bench).
 * No explicit gc() here, so the profile's GC share is the workload's own.
 */
import { loadAdapter } from './frameworks.mjs';

const [which = 'troupe', workload = 'w3', repsArg] = process.argv.slice(2);
const adapter = await loadAdapter(which);
const shapes = {
  w0: { turns: [0], reps: 20000 },
  w1: { turns: [100, 0], reps: 2000 },
  w3: { turns: [...Array(200).fill(1), 0], reps: 300 },
  w4: { turns: [5, 0], reps: 20, concurrent: 1000 },
};
const shape = shapes[workload];
if (!shape) throw new Error(`unknown workload ${workload}`);
const reps = Number(repsArg ?? shape.reps);
const start = performance.now();
const cpu = process.cpuUsage();
for (let i = 0; i < reps; i++) {
  if (shape.concurrent) await Promise.all(Array.from({ length: shape.concurrent }, () => adapter.run(shape.turns)));
  else await adapter.run(shape.turns);
}
const used = process.cpuUsage(cpu);
// CPU time beside wall time: on a shared machine the CPU time is the steadier of the two.
console.log(`${which} ${workload}: ${reps} reps in ${(performance.now() - start).toFixed(0)} ms wall, ${((used.user + used.system) / 1000).toFixed(0)} ms cpu`);
