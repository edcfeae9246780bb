import type { InspectionEvent } from 'xstate';
import { Agent } from '../agent.js';
import { getRunMachine } from '../runtime/run-machine.js';
import type { RunEvent } from '../types.js';
import { transitionKey, walkChart, type ChartShape } from './chart-shape.js';
import type { AgentCoverage, CoverageReport, CoveredItem } from './coverage-report.js';

export { coverageTable, type AgentCoverage, type ChartCoverage, type CoverageReport, type CoveredItem } from './coverage-report.js';

const DENIED = 'Tool error: approval denied for tool ';

let shape: ChartShape | undefined;
/** The run chart's states and transitions, read once. */
function chartShape(): ChartShape {
  return (shape ??= walkChart(getRunMachine()));
}

interface AgentTally {
  tools: Map<string, { ok: number; error: number }>;
  handoffs: Map<string, number>;
  approvals: { approved: number; denied: number };
  waits: { resolved: number; timedOut: number };
}

/**
 * Records which states and transitions of the real run chart your runs go through, and which
 * tools, handoffs, approvals and waits of your agents they use. Pass `recorder.inspect` as a
 * run's `inspect` option and each event of the run to `recorder.observe` (or let
 * `recorder.watch(handle)` read the stream), over as many runs as you like, then read
 * `recorder.report()` (plain data: JSON as it is) or `coverageTable(report)`.
 *
 * ```ts
 * const coverage = new CoverageRecorder(agent);
 * const handle = Runner.stream(agent, 'hi', { inspect: coverage.inspect });
 * for await (const event of handle) coverage.observe(event);
 * console.log(coverageTable(coverage.report()));
 * ```
 * Never throws on events it does not know; it only counts.
 */
export class CoverageRecorder {
  private readonly states = new Map<string, number>();
  private readonly transitions = new Map<string, number>();
  private readonly agents = new Map<string, AgentTally>();
  /** Calls that asked for an approval, by `runId/callId`, until their result. */
  private readonly gated = new Set<string>();
  private runs = 0;
  private readonly lastNodes = new WeakMap<object, Set<string>>();

  /** `agent`: the start of your agent system; every agent it reaches is listed, its unused tools and handoffs with 0. */
  constructor(agent?: Agent) {
    if (agent) for (const reached of reachableAgents(agent)) this.listAgent(reached);
  }

  /** The XState inspection observer: counts the run actors' microsteps (other actors of the tree are ignored). */
  readonly inspect = (event: InspectionEvent): void => {
    if (event.type !== '@xstate.microstep' && event.type !== '@xstate.snapshot') return;
    const snapshot = event.snapshot as unknown as { machine?: { id?: string }; _nodes?: Array<{ id: string }> };
    if (snapshot.machine?.id !== 'run') return;
    if (event.type === '@xstate.microstep') for (const t of event._transitions) bump(this.transitions, transitionKey(t));
    // A state counts once per stay: when it is in this snapshot and was not in the actor's last one.
    const before = this.lastNodes.get(event.actorRef) ?? new Set<string>();
    const now = new Set((snapshot._nodes ?? []).map((node) => node.id));
    for (const id of now) if (!before.has(id)) bump(this.states, id);
    this.lastNodes.set(event.actorRef, now);
  };

  /** Counts one event of a run (any run of the tree). */
  observe(event: RunEvent): void {
    const key = `${event.runId}/${'call' in event ? event.call.id : ''}`;
    switch (event.type) {
      case 'run_started':
        if (event.path.length === 1) this.runs++;
        break;
      case 'approval_required':
        this.gated.add(key);
        break;
      case 'tool_call_started':
        // A gated call starts once approved.
        if (this.gated.delete(key)) this.tally(event.agent).approvals.approved++;
        break;
      case 'tool_call_completed': {
        const tally = this.tally(event.agent);
        const counts = tally.tools.get(event.call.name) ?? { ok: 0, error: 0 };
        tally.tools.set(event.call.name, counts);
        if (event.isError) counts.error++;
        else counts.ok++;
        if (this.gated.delete(key) && event.output.startsWith(DENIED)) tally.approvals.denied++;
        break;
      }
      case 'handoff_occurred': {
        const handoffs = this.tally(event.from).handoffs;
        handoffs.set(event.to, (handoffs.get(event.to) ?? 0) + 1);
        break;
      }
      case 'wait_resolved':
        if (event.timedOut) this.tally(event.agent).waits.timedOut++;
        else this.tally(event.agent).waits.resolved++;
        break;
      default:
        break;
    }
  }

  /** Reads `handle`'s events into `observe` until the stream ends (a RunHandle is an async iterable of events). */
  async watch(handle: AsyncIterable<RunEvent>): Promise<void> {
    for await (const event of handle) this.observe(event);
  }

  /** What was visited so far: every state and transition of the chart (count 0 when never), and each agent's tallies. */
  report(): CoverageReport {
    const chart = chartShape();
    const states: CoveredItem[] = chart.states.map((id) => ({ id, count: this.states.get(id) ?? 0 }));
    const transitions: CoveredItem[] = chart.transitions.map((t) => ({ id: t.key, count: this.transitions.get(t.key) ?? 0 }));
    const agents: AgentCoverage[] = [...this.agents].map(([agent, tally]) => ({
      agent,
      tools: Object.fromEntries([...tally.tools].map(([name, counts]) => [name, { ...counts }])),
      handoffs: Object.fromEntries(tally.handoffs),
      approvals: { ...tally.approvals },
      waits: { ...tally.waits },
    }));
    return {
      runs: this.runs,
      chart: { states, transitions, statesCovered: states.filter((s) => s.count > 0).length, transitionsCovered: transitions.filter((t) => t.count > 0).length },
      agents,
    };
  }

  private tally(agent: string): AgentTally {
    let tally = this.agents.get(agent);
    if (!tally) this.agents.set(agent, (tally = { tools: new Map(), handoffs: new Map(), approvals: { approved: 0, denied: 0 }, waits: { resolved: 0, timedOut: 0 } }));
    return tally;
  }

  private listAgent(agent: Agent): void {
    const tally = this.tally(agent.name);
    for (const tool of agent.toolTable().values()) {
      if (tool.handoff) tally.handoffs.set(tool.handoff.targetName, 0);
      else tally.tools.set(tool.name, { ok: 0, error: 0 });
    }
  }
}

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** `start` and every agent it reaches through handoffs and agents used as tools, breadth-first. */
export function reachableAgents(start: Agent): Agent[] {
  const seen = new Set<Agent>();
  const queue = [start];
  for (let agent = queue.shift(); agent; agent = queue.shift()) {
    if (seen.has(agent)) continue;
    seen.add(agent);
    for (const entry of agent.handoffs) {
      const target = entry instanceof Agent ? entry : entry.handoff?.target;
      if (target instanceof Agent) queue.push(target);
    }
    for (const tool of agent.tools) if (tool.agentTool?.agent instanceof Agent) queue.push(tool.agentTool.agent);
  }
  return [...seen];
}
