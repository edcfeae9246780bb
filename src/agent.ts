import { UserError } from './errors.js';
import { agentAsTool, type AgentToolOptions } from './handoff/agent-tool.js';
import { handoff } from './handoff/handoff.js';
import type { Model, ModelSettings } from './models/model.js';
import type { RunContext } from './tools/context.js';
import type { ResultRenderer, Tool } from './tools/tool.js';
import type { Message, ToolCallRequest } from './types.js';
import type { AgentHooks, Guardrail, OutputOptions } from './hooks.js';
import { resolvePolicy, type ContextPolicy } from './context/policy.js';

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
}

export const DEFAULT_MAX_TOOL_OUTPUT_CHARS = 200_000;

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

  constructor(options: AgentOptions<Deps>) {
    if (!options.name) throw new UserError('Agent needs a name.');
    if (!options.model) throw new UserError(`Agent '${options.name}' needs a model.`);
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
   * Every tool the model can call, keyed by name. Tools, handoffs (and later MCP and
   * built-ins) share one namespace; a clash is a UserError before any tool runs.
   */
  toolTable(): Map<string, Tool<Deps>> {
    const table = new Map<string, Tool<Deps>>();
    const handoffTools = this.handoffs.map((h) => (h instanceof Agent ? handoff(h) : h));
    for (const t of [...this.tools, ...handoffTools]) {
      if (table.has(t.name)) throw new UserError(`Tool name conflict for '${t.name}' from ${t.source}.`);
      table.set(t.name, t);
    }
    return table;
  }
}
