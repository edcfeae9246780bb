// Every path of the desk, without a model or an API key: exploreAgent (troupe/testing) drives the
// real runtime with scripted replies, tool outcomes and approval decisions (the tools' code does
// not run), and checks the run invariants on every path: one result per call, one end, no gated
// call run unapproved, nothing run after a cancel, budgets kept.
import { coverageTable, exploreAgent } from 'troupe/testing';
import { triage } from './agents.js';

const exploration = await exploreAgent(triage, { maxCallsPerRun: 3 });
const outcomes = new Map<string, number>();
for (const path of exploration.paths) outcomes.set(path.outcome, (outcomes.get(path.outcome) ?? 0) + 1);
console.log(`${exploration.paths.length} paths (${[...outcomes].map(([outcome, n]) => `${n} ${outcome}`).join(', ')}), ${exploration.failures.length} break an invariant`);
console.log(coverageTable(exploration.coverage).split('\n')[0]);
