import type { AgentHooks, Guardrail } from '../hooks.js';
import type { ActivePlugin } from '../plugins/plugin-setup.js';
import type { ViewInjector } from '../plugins/plugin.js';
import type { Message } from '../types.js';

/**
 * The hooks and guardrails of the active agent: its own, then its plugins' (in plugin order).
 * An agent is one (an agent without plugins is its own hook set, so nothing is copied).
 */
export interface HookSet {
  readonly hooks: readonly AgentHooks[];
  readonly inputGuardrails: readonly Guardrail<readonly Message[]>[];
  readonly outputGuardrails: readonly Guardrail<unknown>[];
}

/** A plugin's view injector, with whose it is (a throw names the plugin). */
export interface NamedInjector {
  readonly plugin: string;
  readonly agent: string;
  readonly inject: ViewInjector;
}

/** No view injectors (shared: read-only). */
export const NO_INJECTORS: readonly NamedInjector[] = Object.freeze([]);

/** The agent's hooks and guardrails, then its plugins' in plugin order; the agent itself when no plugin is set up. */
export function withPluginHooks(agent: HookSet, plugins: readonly ActivePlugin[]): HookSet {
  if (plugins.length === 0) return agent;
  return {
    hooks: [...agent.hooks, ...plugins.flatMap((p) => p.hooks)],
    inputGuardrails: [...agent.inputGuardrails, ...plugins.flatMap((p) => p.inputGuardrails)],
    outputGuardrails: [...agent.outputGuardrails, ...plugins.flatMap((p) => p.outputGuardrails)],
  };
}

/** The plugins' view injectors in plugin order, each named by its plugin and agent. */
export function pluginInjectors(agent: { readonly name: string }, plugins: readonly ActivePlugin[]): readonly NamedInjector[] {
  if (!plugins.some((p) => p.viewInjectors.length > 0)) return NO_INJECTORS;
  return plugins.flatMap((p) => p.viewInjectors.map((inject) => ({ plugin: p.name, agent: agent.name, inject })));
}
