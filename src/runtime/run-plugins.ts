import type { Agent } from '../agent.js';
import { closePluginsInOrder } from '../plugins/plugin-close.js';
import { closersOf, setUpPlugins, type AgentPlugins } from '../plugins/plugin-setup.js';
import { agentSetup, type AgentSetup, type RunState } from './run-state.js';

/** Whether the active agent has plugins not yet set up in this run (pure; the `pluginsUnset` guard). */
export function pluginsUnset(state: RunState): boolean {
  return state.agent.plugins.length > 0 && state.pluginSetups?.has(state.agent) !== true;
}

/**
 * Sets up `agent`'s plugins for this run and computes the agent's setup with them (merged
 * tools, instructions, hooks, view injectors). Rejects with the PluginError of a failed setup,
 * or the UserError of a tool name clash, having closed every setup it made; so does an abort
 * of `signal` (the run ended meanwhile). Changes nothing in the run: the chart applies the result.
 */
export async function activateAgent(state: RunState, agent: Agent, signal: AbortSignal, resumed = state.resumed): Promise<AgentSetup> {
  const plugins = await setUpPlugins(agent.plugins, { runId: state.runId, agent: { name: agent.name }, deps: state.deps, resumed, signal });
  try {
    return agentSetup(state, agent, plugins);
  } catch (error) {
    await closePluginsInOrder(closersOf(plugins));
    throw error;
  }
}

/** The pluginSetup state's work: the active agent's plugins; resolves with the agent's setup (applyAgentSetup keeps them). */
export function pluginSetupInput(state: RunState): { activate(signal: AbortSignal): Promise<AgentSetup> } {
  const agent = state.agent;
  return { activate: (signal) => activateAgent(state, agent, signal) };
}

/**
 * Entering a final state: every set-up plugin's close, once each, last set up first
 * (closePluginsInOrder); `pluginsClosed` settles when all have. The root's `result()` waits
 * for it. Nothing to close: nothing happens.
 */
export function closePlugins(state: RunState): void {
  if (state.pluginClosers.length === 0 || state.pluginsClosed) return;
  const closers = state.pluginClosers.splice(0);
  state.pluginsClosed = closePluginsInOrder(closers);
}

export type { AgentPlugins };
