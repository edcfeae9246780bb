import type { AgentHooks, Guardrail } from '../hooks.js';
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
