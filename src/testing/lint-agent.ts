import { Agent } from '../agent.js';
import type { AgentToolOptions } from '../handoff/agent-tool.js';
import type { Tool } from '../tools/tool.js';
import { handoffToolName } from '../handoff/slug.js';
import { reachableAgents } from './coverage.js';

/** One thing `lintAgent` found. `error`: a run would fail or a provider would refuse it; `warning`: it runs, maybe not as meant. */
export interface LintFinding {
  readonly rule: LintRule;
  readonly severity: 'error' | 'warning';
  readonly agent: string;
  /** The tool it is about, when it is about one. */
  readonly tool?: string;
  readonly message: string;
}

export type LintRule =
  | 'duplicate-tool-name'
  | 'handoff-cycle'
  | 'approval-without-decider'
  | 'barrier-with-handoffs'
  | 'schema-not-object'
  | 'strict-schema-open-object'
  | 'agent-tool-unbounded'
  | 'tool-without-description';

const isAgent = (value: unknown): value is Agent => value instanceof Agent;
const targetOf = (entry: Agent | Tool): Agent | undefined => (isAgent(entry) ? entry : isAgent(entry.handoff?.target) ? entry.handoff.target : undefined);

/** Every tool the model of `agent` sees, with where it came from (`tools` or `handoffs`); unlike toolTable() it never throws. */
function namedTools(agent: Agent): Array<{ name: string; from: string; tool?: Tool }> {
  return [
    ...agent.tools.map((t) => ({ name: t.name, from: t.agentTool ? 'agent tools' : t.source, tool: t })),
    ...agent.handoffs.map((h) => (isAgent(h) ? { name: handoffToolName(h.name), from: 'handoffs' } : { name: h.name, from: 'handoffs', tool: h })),
  ];
}

/**
 * Static checks of the agent system that starts at `agent` (every agent reachable by handoff
 * or as a tool), with one finding per problem, each with a message that says what to change:
 * tool names that clash (a run fails at run_started), handoff cycles (only the run's maxTurns
 * ends a conversation that bounces), gated tools in agents with no approval handler (a run
 * nobody reads denies them), barriers or sequential tools beside handoffs (the batch runs one
 * call at a time), tool schemas a provider refuses (not an object; open objects in strict
 * mode), agents as tools with no turn limit or budget of their own, tools without a
 * description. Never throws and never runs anything; an empty list means nothing was found.
 */
export function lintAgent(agent: Agent): LintFinding[] {
  const findings: LintFinding[] = [];
  const agents = reachableAgents(agent);
  for (const a of agents) {
    const seen = new Map<string, string>();
    for (const { name, from } of namedTools(a)) {
      const earlier = seen.get(name);
      if (earlier !== undefined) findings.push({ rule: 'duplicate-tool-name', severity: 'error', agent: a.name, tool: name, message: `Agent '${a.name}' has two tools named '${name}' (from ${earlier} and ${from}); tools and handoffs share one namespace, so its runs fail at run_started. Rename one (tool({ name }), handoff(agent, { name }) or asTool({ name })).` });
      else seen.set(name, from);
    }
    const handoffs = a.handoffs.map(targetOf).filter(isAgent);
    for (const t of a.tools) {
      if (t.needsApproval !== false && a.approvalHandler === undefined) {
        findings.push({ rule: 'approval-without-decider', severity: 'warning', agent: a.name, tool: t.name, message: `Tool '${t.name}' of agent '${a.name}' needs approval and the agent has no approvalHandler: a run nobody reads (Runner.run) denies every call of it. Give the agent an approvalHandler, or decide from the stream (approval_required, handle.approvals).` });
      }
      if (handoffs.length > 0 && (!t.parallel || t.executionMode === 'sequential')) {
        findings.push({ rule: 'barrier-with-handoffs', severity: 'warning', agent: a.name, tool: t.name, message: `Tool '${t.name}' of agent '${a.name}' is ${t.parallel ? "executionMode: 'sequential'" : 'parallel: false'} and the agent hands off: a batch with both runs one call at a time and the handoff waits for it. Keep the tool parallel, or move it to the agent it hands off to.` });
      }
      if (t.description.trim() === '') findings.push({ rule: 'tool-without-description', severity: 'warning', agent: a.name, tool: t.name, message: `Tool '${t.name}' of agent '${a.name}' has no description: the model sees only its name.` });
      schemaFindings(a, t, findings);
      const sub = t.agentTool;
      const subOptions = (sub?.options ?? {}) as AgentToolOptions;
      if (sub && subOptions.maxTurns === undefined && subOptions.budget === undefined) {
        findings.push({ rule: 'agent-tool-unbounded', severity: 'warning', agent: a.name, tool: t.name, message: `Agent tool '${t.name}' of agent '${a.name}' has no turn limit or budget of its own: each call may take 10 turns and spend what the caller has left. Set asTool({ maxTurns }) or asTool({ budget }).` });
      }
    }
    if (a.toolExecution === 'sequential' && handoffs.length > 0) {
      findings.push({ rule: 'barrier-with-handoffs', severity: 'warning', agent: a.name, message: `Agent '${a.name}' runs every batch sequentially (toolExecution: 'sequential') and hands off: a handoff waits for every call before it in the batch.` });
    }
  }
  for (const cycle of handoffCycles(agents)) {
    findings.push({ rule: 'handoff-cycle', severity: 'warning', agent: cycle[0]!, message: `Handoffs loop: ${cycle.join(' → ')}. Only the run's maxTurns (default 10) ends a conversation that bounces between them; give the agents a rule for when not to hand back, and a run maxTurns you accept.` });
  }
  return findings;
}

function schemaFindings(agent: Agent, t: Tool, findings: LintFinding[]): void {
  const schema = t.jsonSchema as Record<string, unknown>;
  if (schema.type !== 'object') {
    findings.push({ rule: 'schema-not-object', severity: 'error', agent: agent.name, tool: t.name, message: `Tool '${t.name}' of agent '${agent.name}' has parameters of type ${JSON.stringify(schema.type ?? '(none)')}: providers take only an object schema. Wrap the value in an object (z.object({ value: … })).` });
  }
  if (!t.strict) return;
  const open: string[] = [];
  const visit = (node: unknown, where: string): void => {
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) return node.forEach((n, i) => visit(n, `${where}[${i}]`));
    const n = node as Record<string, unknown>;
    if (n.type === 'object' && n.additionalProperties !== false) open.push(where || '(root)');
    for (const [key, value] of Object.entries(n)) if (typeof value === 'object') visit(value, key === 'properties' ? where : `${where}${where ? '.' : ''}${key}`);
  };
  visit(schema, '');
  for (const where of open) {
    findings.push({ rule: 'strict-schema-open-object', severity: 'error', agent: agent.name, tool: t.name, message: `Tool '${t.name}' of agent '${agent.name}' is strict, and its schema has an object open to more properties at ${where} (a record or passthrough object): strict mode refuses it. Give the object fixed properties, or make the tool non-strict.` });
  }
}

/** Each handoff cycle once, as agent names from its first agent (in reach order) back to it. */
function handoffCycles(agents: readonly Agent[]): string[][] {
  const cycles: string[][] = [];
  const found = new Set<string>();
  const walk = (agent: Agent, trail: Agent[]): void => {
    for (const entry of agent.handoffs) {
      const next = targetOf(entry);
      if (!next) continue;
      const at = trail.indexOf(next);
      if (at >= 0) {
        const loop = trail.slice(at);
        const id = loop.map((a) => a.name).sort().join('|');
        if (!found.has(id)) {
          found.add(id);
          cycles.push([...loop, next].map((a) => a.name));
        }
      } else walk(next, [...trail, next]);
    }
  };
  for (const agent of agents) walk(agent, [agent]);
  return cycles;
}
