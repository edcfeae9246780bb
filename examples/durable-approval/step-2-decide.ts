// Another process, any time later: finds the approval the run waits for in its log and
// records the decision there. The crashed process's lease is taken over at once (its
// process is provably gone); nothing runs here.
import { Runner } from 'troupe';
import { RUN_ID, store } from './agent.js';

const { approvals: pending } = await Runner.pending(store, RUN_ID);
console.log(`pending approvals: ${pending.map((e) => `${e.approvalId} (${e.tool})`).join(', ') || 'none'}`);
for (const request of pending) {
  await Runner.decide(store, RUN_ID, request.approvalId, { approved: true, by: 'alice' });
  console.log(`alice approved ${request.approvalId}`);
}
store.close();
