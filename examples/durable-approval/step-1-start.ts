// Starts the run. When the refund waits for its approval and the request is on disk, the
// process kills itself with SIGKILL: no cleanup, no lease release, as in a real crash.
import { Runner } from 'troupe';
import { RUN_ID, desk, store } from './agent.js';

const handle = Runner.stream(desk, 'Refund order A123.', { checkpoint: { store, runId: RUN_ID, ifRunExists: 'fail' } });
for await (const event of handle) {
  if (event.type === 'tool_call_completed') console.log(`${event.call.name}: ${event.output}`);
  if (event.type === 'approval_required') {
    console.log(`waiting for approval ${event.approvalId}: ${event.call.name} ${JSON.stringify(event.args)}`);
    await stored(event.approvalId);
    console.log(`status ${store.load(RUN_ID)?.head.status}; killing this process (SIGKILL)`);
    process.kill(process.pid, 'SIGKILL');
  }
}

/** Resolves once the run's log holds the approval request. */
async function stored(approvalId: string): Promise<void> {
  while (!store.load(RUN_ID)?.entries.some((e) => e.kind === 'approval_request' && e.approvalId === approvalId)) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
