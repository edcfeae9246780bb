import type { AgentHooks, Guardrail, HookContext } from '../hooks.js';
import type { Tool } from '../tools/tool.js';
import type { Message } from '../types.js';

/**
 * A plugin: one object that brings an agent several things at once (lovia's plugin): tools,
 * prompt text, per-request view entries, hooks, guardrails and a teardown. Give plugins to an
 * agent as `plugins: [...]`; their names must be unique on the agent.
 *
 * `setup` runs once per run for each agent that becomes active in it (the first agent before
 * its first model request; a handoff target when the handoff makes it active; an agent handed
 * back to is not set up again), in plugin order, one at a time. A resumed durable run sets its
 * plugins up again (plugins are code, not state: nothing of a setup is stored). What setup
 * keeps in its closure is per run; what lives on the plugin object is shared by every run.
 */
export interface Plugin<Deps = any> {
  /** The plugin's identity: unique among the agent's plugins (a duplicate is a UserError when the agent is made). */
  readonly name: string;
  /**
   * Sync or async. A throw (or a malformed result) fails the run with a PluginError naming
   * the plugin; the setups that already succeeded in that step are closed.
   */
  setup(ctx: PluginContext<Deps>): PluginSetup<Deps> | void | Promise<PluginSetup<Deps> | void>;
}

/** What `setup` is told about the run it is set up in. */
export interface PluginContext<Deps = any> {
  readonly runId: string;
  /** The agent whose plugin this is (the one becoming active). */
  readonly agent: { readonly name: string };
  readonly deps: Deps;
  /** The run was resumed from its log (its plugins are set up again). */
  readonly resumed: boolean;
  /** Aborts when the run ends while setup still runs (the setup's close is then called as soon as it returns). */
  readonly signal: AbortSignal;
}

/**
 * A view injector: called before each model request of its agent with the run's hook context;
 * what it returns (a user message's text, messages, or nothing) is appended to that request's
 * messages only, after contextPolicy and before the beforeModelCall hooks. It never enters the
 * transcript, the log or the session, so it does not pile up turn after turn (a system
 * reminder, a clock, a todo list). Sync or async; a throw fails the run with a PluginError.
 */
export type ViewInjector<Deps = any> = (ctx: HookContext<Deps>) => string | Message | readonly Message[] | undefined | void | Promise<string | Message | readonly Message[] | undefined | void>;

/** What a plugin's setup contributes; every field is optional. */
export interface PluginSetup<Deps = any> {
  /** Merged into the agent's tools after its own and before its handoffs; a name clash fails the run with a UserError naming both sources. */
  readonly tools?: readonly Tool<Deps>[];
  /** Added to the system prompt after the agent's instructions (in plugin order), before the run's `instructions`. */
  readonly instructions?: string;
  /** Entries added to each model request's view (see ViewInjector). */
  readonly viewInjectors?: readonly ViewInjector<Deps>[];
  /** Hooks that apply while this agent is the active one, after the agent's own hooks (in plugin order). */
  readonly hooks?: AgentHooks<Deps> | readonly AgentHooks<Deps>[];
  /** Run beside the agent's own input guardrails (first turn of the run). */
  readonly inputGuardrails?: readonly Guardrail<readonly Message[], Deps>[];
  /** Run beside the agent's own output guardrails. */
  readonly outputGuardrails?: readonly Guardrail<unknown, Deps>[];
  /**
   * Called exactly once when the run ends, however it ends (completed, failed, cancelled,
   * suspended), in reverse setup order (the last set up closes first), each awaited before the
   * next. `result()` settles after every close settled. A close that throws changes nothing
   * about the run: it is reported as a process warning (code TROUPE_PLUGIN_CLOSE) and the
   * next close still runs.
   */
  readonly close?: () => void | Promise<void>;
}
