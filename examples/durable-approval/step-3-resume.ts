// A third process continues the run from its log: lookup_order's stored result is reused,
// the approved refund runs, the model answers.
import { Runner } from 'troupe';
import { RUN_ID, desk, ledger, store } from './agent.js';

const handle = Runner.resume(desk, { store, runId: RUN_ID });
for await (const event of handle) {
  if (event.type === 'tool_call_completed') console.log(`${event.call.name}: ${event.output}`);
}
const result = await handle.result();
console.log(`output: ${result.output}`);
console.log(`status ${store.load(RUN_ID)?.head.status} after ${result.turns} turns`);
console.log('ledger (one line per tool execution, in every process):');
for (const line of ledger()) console.log(`  ${line}`);
store.close();
