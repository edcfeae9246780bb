import { PluginError, UserError } from '../errors.js';
import type { AgentHooks, Guardrail } from '../hooks.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import type { Tool } from '../tools/tool.js';
import type { Message } from '../types.js';
import type { Plugin, PluginContext, PluginSetup, ViewInjector } from './plugin.js';
import { closePluginsInOrder, type PluginCloser } from './plugin-close.js';

/** One plugin as its setup left it for a run: what it contributes, checked. */
export interface ActivePlugin {
  readonly name: string;
  readonly tools: readonly Tool[];
  readonly instructions: string;
  readonly viewInjectors: readonly ViewInjector[];
  readonly hooks: readonly AgentHooks[];
  readonly inputGuardrails: readonly Guardrail<readonly Message[]>[];
  readonly outputGuardrails: readonly Guardrail<unknown>[];
  readonly close: (() => void | Promise<void>) | undefined;
}

/** The plugins of one agent, set up for one run (in plugin order). */
export interface AgentPlugins {
  readonly agentName: string;
  readonly plugins: readonly ActivePlugin[];
}

const SETUP_KEYS = optionKeys<PluginSetup>({ tools: true, instructions: true, viewInjectors: true, hooks: true, inputGuardrails: true, outputGuardrails: true, close: true });

/**
 * Runs the setups of `plugins` one at a time, in order. Resolves with every plugin's
 * contribution; rejects with a PluginError naming the first plugin whose setup threw or
 * returned something malformed, after closing the setups that succeeded (reverse order).
 * When `signal` aborts (the run ended while a setup ran), whatever was set up is closed as
 * soon as the running setup returns, and the promise rejects: so each successful setup is
 * closed exactly once, here or by the run that keeps it.
 */
export async function setUpPlugins(plugins: readonly Plugin[], ctx: PluginContext): Promise<AgentPlugins> {
  const agentName = ctx.agent.name;
  const done: ActivePlugin[] = [];
  try {
    for (const plugin of plugins) {
      let given: unknown;
      try {
        given = await plugin.setup(ctx);
      } catch (error) {
        throw new PluginError(plugin.name, agentName, 'setup', error);
      }
      done.push(checkedSetup(plugin.name, agentName, given));
      if (ctx.signal.aborted) throw new PluginError(plugin.name, agentName, 'setup', new Error('the run ended during setup'));
    }
  } catch (error) {
    await closePluginsInOrder(closersOf({ agentName, plugins: done }));
    throw error;
  }
  return { agentName, plugins: done };
}

/** The close functions of `set`, in setup order (closing runs them last first). */
export function closersOf(set: AgentPlugins): PluginCloser[] {
  return set.plugins.filter((p) => p.close !== undefined).map((p) => ({ plugin: p.name, agent: set.agentName, close: p.close! }));
}

/** What a setup returned, checked field by field. @throws PluginError (a UserError cause) naming the field. */
function checkedSetup(name: string, agent: string, given: unknown): ActivePlugin {
  const bad = (why: string): PluginError => new PluginError(name, agent, 'setup', new UserError(`setup returned ${why}`));
  if (given === undefined || given === null) return { name, tools: [], instructions: '', viewInjectors: [], hooks: [], inputGuardrails: [], outputGuardrails: [], close: undefined };
  try {
    checkOptionKeys(given, SETUP_KEYS, `plugin '${name}' setup result`, 'field');
  } catch (error) {
    throw new PluginError(name, agent, 'setup', error);
  }
  const setup = given as PluginSetup;
  const list = <T>(key: string, value: readonly T[] | undefined, ok: (item: T) => boolean, what: string): readonly T[] => {
    if (value === undefined) return [];
    if (!Array.isArray(value)) throw bad(`'${key}' that is not an array`);
    value.forEach((item, i) => {
      if (!ok(item)) throw bad(`'${key}[${i}]' that is not ${what}`);
    });
    return [...value];
  };
  const isFunction = (f: unknown): boolean => typeof f === 'function';
  const tools = list('tools', setup.tools, (t: Tool) => typeof t === 'object' && t !== null && typeof t.name === 'string' && typeof t.execute === 'function' && typeof t.jsonSchema === 'object', 'a tool');
  if (setup.instructions !== undefined && typeof setup.instructions !== 'string') throw bad(`'instructions' that is not a string`);
  const hooks = setup.hooks === undefined ? [] : Array.isArray(setup.hooks) ? [...setup.hooks] : [setup.hooks as AgentHooks];
  hooks.forEach((h, i) => {
    if (typeof h !== 'object' || h === null) throw bad(`'hooks[${i}]' that is not an object of hook functions`);
    for (const [key, fn] of Object.entries(h)) if (fn !== undefined && typeof fn !== 'function') throw bad(`hook '${key}' that is not a function`);
  });
  if (setup.close !== undefined && typeof setup.close !== 'function') throw bad(`'close' that is not a function`);
  return {
    name,
    tools,
    instructions: setup.instructions ?? '',
    viewInjectors: list('viewInjectors', setup.viewInjectors, isFunction, 'a function'),
    hooks,
    inputGuardrails: list('inputGuardrails', setup.inputGuardrails, isFunction, 'a function'),
    outputGuardrails: list('outputGuardrails', setup.outputGuardrails, isFunction, 'a function'),
    close: setup.close,
  };
}

/** @throws UserError when `plugins` is not an array of `{ name, setup }` with unique names (checked when the agent is made, before any setup). */
export function checkPlugins(plugins: unknown, where: string): void {
  if (plugins === undefined) return;
  if (!Array.isArray(plugins)) throw new UserError(`${where}: plugins must be an array, got ${typeof plugins}.`);
  const seen = new Set<string>();
  plugins.forEach((p: Partial<Plugin> | null, i) => {
    if (typeof p !== 'object' || p === null || typeof p.name !== 'string' || p.name === '' || typeof p.setup !== 'function') {
      throw new UserError(`${where}: plugins[${i}] must be a plugin { name: non-empty string, setup(ctx) }.`);
    }
    if (seen.has(p.name)) throw new UserError(`${where}: two plugins are named '${p.name}'; a plugin's name must be unique on its agent.`);
    seen.add(p.name);
  });
}
