import { Runner } from 'troupe';
import { triage } from './agents.js';

/** The supervisor decides refund approvals: up to $100 yes, more needs a manager. */
const SUPERVISOR_LIMIT_CENTS = 10_000;

const customers = [
  'I was charged twice for order A123, please refund the duplicate.',
  'Please refund order B777, the desk arrived broken.',
  'The app crashes when I export a report.',
];

for (const input of customers) {
  console.log(`customer: ${input}`);
  const handle = Runner.stream(triage, input);
  for await (const event of handle) {
    if (event.type === 'handoff_occurred') console.log(`  handoff: ${event.from} -> ${event.to}`);
    if (event.type === 'approval_required') {
      const { cents } = event.args as { cents: number };
      const approved = cents <= SUPERVISOR_LIMIT_CENTS;
      console.log(`  approval: ${event.call.name} ${JSON.stringify(event.args)} -> ${approved ? 'approved' : 'rejected'}`);
      // Decide before pulling the next event; an undecided approval is a denial.
      if (approved) event.approve();
      else event.reject('refunds over $100 need a manager');
    }
    if (event.type === 'tool_call_completed') console.log(`  [${event.agent}] ${event.call.name}: ${event.output}`);
  }
  const result = await handle.result();
  console.log(`${result.agent}: ${result.output}\n`);
}
