import { UserError } from './errors.js';
import { checkOptionKeys, optionKeys } from './option-keys.js';
import { agentAsTool, type AgentToolOptions } from './handoff/agent-tool.js';
import { handoff } from './handoff/handoff.js';
import type { Model, ModelSettings } from './models/model.js';
import type { RunContext } from './tools/context.js';
import type { ResultRenderer, Tool } from './tools/tool.js';
import type { Message, ToolCallRequest } from './types.js';
import type { AgentHooks, Guardrail, OutputOptions } from './hooks.js';
import { resolvePolicy, type ContextPolicy } from './context/policy.js';
import type { Plugin } from './plugins/plugin.js';
import { checkPlugins } from './plugins/plugin-setup.js';

/** What an approval handler answers: allow, deny, or leave it to the stream consumer. */
export type ApprovalDecision = boolean | 'allow' | 'deny' | 'ask';

export interface ApprovalRequest {
  readonly call: ToolCallRequest;
  readonly args: unknown;
  readonly agent: string;
  readonly path: readonly string[];
}

export type ApprovalHandler = (request: ApprovalRequest, ctx: RunContext<any>) => ApprovalDecision | Promise<ApprovalDecision>;

export interface AgentOptions<Deps = any> extends OutputOptions<Deps> {
  name: string;
  instructions?: string | ((ctx: { deps: Deps; agent: Agent<Deps> }) => string);
  model: Model;
  tools?: readonly Tool<Deps>[];
  /** Agents this one may transfer to, given as agents or `handoff(agent, options)`; they share the tool namespace. */
  handoffs?: ReadonlyArray<Agent<any> | Tool<Deps>>;
  approvalHandler?: ApprovalHandler;
  defaultToolRetries?: number;
  defaultToolTimeoutMs?: number;
  /** Default 200,000 code points; null turns truncation off. */
  maxToolOutputChars?: number | null;
  toolResultRenderer?: ResultRenderer;
  /** "sequential" runs every batch one call at a time. */
  toolExecution?: 'parallel' | 'sequential';
  settings?: ModelSettings;
  /** Hooks that shape the loop (see AgentHooks); several compose in order. */
  hooks?: AgentHooks<Deps> | readonly AgentHooks<Deps>[];
  /** View-only compaction of what the model is sent (see ContextPolicy); a run's `contextPolicy` option overrides it. */
  contextPolicy?: ContextPolicy;
  /**
   * Plugins (see Plugin): each is set up once per run when this agent becomes active, and
   * brings tools, instructions, view injectors, hooks, guardrails and a close. Names must be
   * unique (a UserError here, before any setup).
   */
  plugins?: readonly Plugin<Deps>[];
}

export const DEFAULT_MAX_TOOL_OUTPUT_CHARS = 200_000;

const AGENT_KEYS = optionKeys<AgentOptions>({
  name: true,
  instructions: true,
  model: true,
  tools: true,
  handoffs: true,
  approvalHandler: true,
  defaultToolRetries: true,
  defaultToolTimeoutMs: true,
  maxToolOutputChars: true,
  toolResultRenderer: true,
  toolExecution: true,
  settings: true,
  hooks: true,
  contextPolicy: true,
  outputType: true,
  inputGuardrails: true,
  outputGuardrails: true,
  plugins: true,
});
const HOOK_KEYS = optionKeys<AgentHooks>({ resolveToolCall: true, transformContext: true, convertToModel: true, beforeModelCall: true, afterModelResponse: true, beforeToolCall: true, afterToolCall: true, shouldStopAfterTurn: true, onRunEnd: true });
const SETTINGS_KEYS = optionKeys<ModelSettings>({ temperature: true, maxTokens: true, parallelToolCalls: true, providerOptions: true });

/** Whether `value` is a tool as `tool()`, `rawTool()`, `handoff()` or `agent.asTool()` make them. */
export function isTool(value: unknown): value is Tool {
  const t = value as Partial<Tool> | null;
  return typeof t === 'object' && t !== null && typeof t.name === 'string' && typeof t.execute === 'function' && typeof t.jsonSchema === 'object';
}

/** What a value is, for messages. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object with keys ${Object.keys(value).join(', ') || '(none)'}`;
  return typeof value === 'string' ? JSON.stringify(value) : `${typeof value} ${String(value)}`;
}

/** @throws UserError for agent options a run could not use (each named, with what was given). */
function checkAgentOptions(options: AgentOptions<any>): void {
  checkOptionKeys(options, AGENT_KEYS, 'Agent');
  if (typeof options.name !== 'string' || options.name === '') throw new UserError(`Agent needs a name (a non-empty string), got ${shown(options.name)}.`);
  const where = `Agent '${options.name}'`;
  if (typeof options.model?.stream !== 'function') throw new UserError(`${where} needs a model (an object with stream()), got ${shown(options.model)}.`);
  if (options.instructions !== undefined && typeof options.instructions !== 'string' && typeof options.instructions !== 'function') {
    throw new UserError(`${where}: instructions must be a string or a function, got ${shown(options.instructions)}.`);
  }
  const list = (key: string, value: unknown): readonly unknown[] => {
    if (value === undefined) return [];
    if (!Array.isArray(value)) throw new UserError(`${where}: ${key} must be an array, got ${shown(value)}.`);
    return value;
  };
  list('tools', options.tools).forEach((t, i) => {
    if (!isTool(t)) throw new UserError(`${where}: tools[${i}] is not a tool (make one with tool() or rawTool()), got ${shown(t)}.`);
  });
  list('handoffs', options.handoffs).forEach((h, i) => {
    if (!(h instanceof Agent) && !(isTool(h) && h.handoff)) throw new UserError(`${where}: handoffs[${i}] must be an Agent or handoff(agent, options), got ${shown(h)}.`);
  });
  for (const key of ['inputGuardrails', 'outputGuardrails'] as const) {
    list(key, options[key]).forEach((g, i) => {
      if (typeof g !== 'function') throw new UserError(`${where}: ${key}[${i}] must be a function, got ${shown(g)}.`);
    });
  }
  const hooks = options.hooks === undefined ? [] : Array.isArray(options.hooks) ? options.hooks : [options.hooks];
  hooks.forEach((h: unknown) => {
    checkOptionKeys(h, HOOK_KEYS, `${where} hook`);
    for (const [name, fn] of Object.entries(h as object)) if (fn !== undefined && typeof fn !== 'function') throw new UserError(`${where}: hook ${name} must be a function, got ${shown(fn)}.`);
  });
  checkPlugins(options.plugins, where);
  if (options.settings !== undefined) checkOptionKeys(options.settings, SETTINGS_KEYS, `${where} settings`, 'field');
  if (options.approvalHandler !== undefined && typeof options.approvalHandler !== 'function') throw new UserError(`${where}: approvalHandler must be a function, got ${shown(options.approvalHandler)}.`);
  if (options.toolExecution !== undefined && options.toolExecution !== 'parallel' && options.toolExecution !== 'sequential') {
    throw new UserError(`${where}: toolExecution must be "parallel" or "sequential", got ${shown(options.toolExecution)}.`);
  }
  const count = (key: string, value: unknown, min: number): void => {
    if (value !== undefined && !(typeof value === 'number' && Number.isInteger(value) && value >= min)) throw new UserError(`${where}: ${key} must be an integer >= ${min}, got ${shown(value)}.`);
  };
  count('defaultToolRetries', options.defaultToolRetries, 0);
  count('defaultToolTimeoutMs', options.defaultToolTimeoutMs, 0);
  if (options.maxToolOutputChars !== null) count('maxToolOutputChars', options.maxToolOutputChars, 0);
}

export class Agent<Deps = any> {
  readonly name: string;
  readonly instructions: AgentOptions<Deps>['instructions'];
  readonly model: Model;
  readonly tools: readonly Tool<Deps>[];
  /** Mutable so agents can hand off to each other: `a.handoffs.push(b)` after both exist. */
  readonly handoffs: Array<Agent<any> | Tool<Deps>>;
  readonly approvalHandler: ApprovalHandler | undefined;
  readonly defaultToolRetries: number;
  readonly defaultToolTimeoutMs: number | undefined;
  readonly maxToolOutputChars: number | null;
  readonly toolResultRenderer: ResultRenderer | undefined;
  readonly toolExecution: 'parallel' | 'sequential';
  readonly settings: ModelSettings;
  readonly hooks: readonly AgentHooks<Deps>[];
  readonly outputType: OutputOptions['outputType'];
  readonly inputGuardrails: readonly Guardrail<readonly Message[], Deps>[];
  readonly outputGuardrails: readonly Guardrail<unknown, Deps>[];
  readonly contextPolicy: ContextPolicy | undefined;
  readonly plugins: readonly Plugin<Deps>[];

  /** @throws UserError on an unknown option (naming the closest one) or a malformed value. */
  constructor(options: AgentOptions<Deps>) {
    checkAgentOptions(options);
    this.name = options.name;
    this.instructions = options.instructions ?? '';
    this.model = options.model;
    this.tools = options.tools ?? [];
    this.handoffs = [...(options.handoffs ?? [])];
    this.approvalHandler = options.approvalHandler;
    this.defaultToolRetries = options.defaultToolRetries ?? 0;
    this.defaultToolTimeoutMs = options.defaultToolTimeoutMs;
    this.maxToolOutputChars = options.maxToolOutputChars === undefined ? DEFAULT_MAX_TOOL_OUTPUT_CHARS : options.maxToolOutputChars;
    this.toolResultRenderer = options.toolResultRenderer;
    this.toolExecution = options.toolExecution ?? 'parallel';
    this.settings = options.settings ?? {};
    this.hooks = options.hooks === undefined ? [] : Array.isArray(options.hooks) ? [...options.hooks] : [options.hooks as AgentHooks<Deps>];
    this.outputType = options.outputType;
    this.inputGuardrails = [...(options.inputGuardrails ?? [])];
    this.outputGuardrails = [...(options.outputGuardrails ?? [])];
    // A malformed policy fails here, not at the first long request.
    if (options.contextPolicy !== undefined) resolvePolicy(options.contextPolicy);
    this.contextPolicy = options.contextPolicy;
    this.plugins = Object.freeze([...(options.plugins ?? [])]);
  }

  /** This agent as a tool: each call runs it as a child run of the caller. */
  asTool(options: AgentToolOptions = {}): Tool {
    return agentAsTool(this, options);
  }

  /** Resolves the system prompt for a run. */
  systemPrompt(deps: Deps): string {
    return typeof this.instructions === 'function' ? this.instructions({ deps, agent: this }) : (this.instructions ?? '');
  }

  /**
   * Every tool the model can call, keyed by name, merged in a fixed order: the agent's tools,
   * then its plugins' tools (`pluginTools`, once set up, in plugin order), then its handoffs.
   * They share one namespace; a clash is a UserError naming both sources, before any tool runs.
   */
  toolTable(pluginTools: ReadonlyArray<{ readonly source: string; readonly tools: readonly Tool<any>[] }> = []): Map<string, Tool<Deps>> {
    const table = new Map<string, Tool<Deps>>();
    const sources = new Map<string, string>();
    const add = (t: Tool<Deps>, source: string): void => {
      const earlier = sources.get(t.name);
      if (earlier !== undefined) throw new UserError(`Tool name conflict for '${t.name}' from ${source} (also from ${earlier}).`);
      table.set(t.name, t);
      sources.set(t.name, source);
    };
    for (const t of this.tools) add(t, t.source);
    for (const { source, tools } of pluginTools) for (const t of tools) add(t as Tool<Deps>, source);
    for (const h of this.handoffs) add(h instanceof Agent ? handoff(h) : h, 'handoffs');
    return table;
  }
}

/**
 * Checks, before a run starts, every agent it can reach (through handoffs and agents used as
 * tools): its handoffs are agents or handoff tools (`handoffs` can change after construction)
 * and its tool names are unique (tools, handoffs and MCP tools share one namespace). So a
 * clash in an agent reached only by a later handoff fails the run at `run_started`, before
 * any model request, instead of mid-run.
 * @throws UserError naming the agent (when it is not `start`) and what is wrong.
 */
export function checkAgentGraph(start: Agent): void {
  const seen = new Set<Agent>();
  const queue: Agent[] = [start];
  for (let agent = queue.shift(); agent; agent = queue.shift()) {
    if (seen.has(agent)) continue;
    seen.add(agent);
    try {
      agent.handoffs.forEach((entry, i) => {
        if (!(entry instanceof Agent) && !(isTool(entry) && entry.handoff)) throw new UserError(`handoffs[${i}] must be an Agent or handoff(agent, options), got ${shown(entry)}.`);
      });
      agent.toolTable();
    } catch (error) {
      if (!(error instanceof UserError)) throw error;
      throw agent === start && !error.message.startsWith('handoffs[') ? error : new UserError(`Agent '${agent.name}'${agent === start ? '' : ` (reachable from '${start.name}')`}: ${error.message}`);
    }
    for (const entry of agent.handoffs) queue.push(entry instanceof Agent ? entry : (entry.handoff!.target as Agent));
    for (const t of agent.tools) if (t.agentTool?.agent instanceof Agent) queue.push(t.agentTool.agent);
  }
}
