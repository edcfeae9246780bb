/**
 * A coverage report as plain data (JSON as it is) and as a text table. Built by
 * `CoverageRecorder.report()` (coverage.ts) from what runs visited; the server's `coverage`
 * option (server/coverage-route.ts) reads one back from a file for the inspector's chart.
 */

/** How often one state of the run chart was entered, or one transition taken (0: never). */
export interface CoveredItem {
  /** A state id (`run.turn.executing.approvalWait`) or a transition key (`run.turn.model model.replied#4 -> run.turn.executing`). */
  readonly id: string;
  readonly count: number;
}

export interface ChartCoverage {
  readonly states: readonly CoveredItem[];
  readonly transitions: readonly CoveredItem[];
  readonly statesCovered: number;
  readonly transitionsCovered: number;
}

/** Per agent: its tools as called (by outcome), its handoffs taken, its approvals decided and its waits ended. */
export interface AgentCoverage {
  readonly agent: string;
  /** `tool name → { ok, error }`: results the tool's calls had (every tool the agent has is listed, 0 when never called). */
  readonly tools: Readonly<Record<string, { readonly ok: number; readonly error: number }>>;
  /** `target agent → times` (every handoff the agent has is listed). */
  readonly handoffs: Readonly<Record<string, number>>;
  readonly approvals: { readonly approved: number; readonly denied: number };
  readonly waits: { readonly resolved: number; readonly timedOut: number };
}

export interface CoverageReport {
  readonly runs: number;
  readonly chart: ChartCoverage;
  readonly agents: readonly AgentCoverage[];
}

const percent = (n: number, of: number): string => `${of === 0 ? 100 : Math.round((n / of) * 100)}%`;

/**
 * The report as text: a summary line for the chart, one line per state and transition never
 * visited, then one block per agent (tools with ok/error counts, handoffs, approvals, waits).
 */
export function coverageTable(report: CoverageReport): string {
  const { chart } = report;
  const lines = [
    `run chart, ${report.runs} run${report.runs === 1 ? '' : 's'}: states ${chart.statesCovered}/${chart.states.length} (${percent(chart.statesCovered, chart.states.length)}), transitions ${chart.transitionsCovered}/${chart.transitions.length} (${percent(chart.transitionsCovered, chart.transitions.length)})`,
  ];
  const missed = (items: readonly CoveredItem[]) => items.filter((i) => i.count === 0).map((i) => i.id);
  for (const id of missed(chart.states)) lines.push(`  state never entered: ${id}`);
  for (const id of missed(chart.transitions)) lines.push(`  transition never taken: ${id}`);
  for (const agent of report.agents) {
    lines.push(`agent ${agent.agent}:`);
    for (const [name, { ok, error }] of Object.entries(agent.tools)) lines.push(`  tool ${name}: ${ok} ok, ${error} error${ok + error === 0 ? '  (never called)' : ''}`);
    for (const [target, times] of Object.entries(agent.handoffs)) lines.push(`  handoff to ${target}: ${times}${times === 0 ? '  (never taken)' : ''}`);
    if (agent.approvals.approved + agent.approvals.denied > 0) lines.push(`  approvals: ${agent.approvals.approved} approved, ${agent.approvals.denied} denied`);
    if (agent.waits.resolved + agent.waits.timedOut > 0) lines.push(`  waits: ${agent.waits.resolved} resolved, ${agent.waits.timedOut} timed out`);
  }
  return lines.join('\n');
}

