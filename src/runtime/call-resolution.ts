/**
 * The chart's `resolving` step (CubePi's tool-call resolver): before preflight, each open call
 * of the turn's reply is offered to the agent's `resolveToolCall` hooks, in request order; the
 * first non-empty answer is the call that runs instead (the model's call id kept). A hook that
 * throws or answers with something that is not a call gives that call an error result.
 */
import type { ResolvedToolCall } from '../hooks.js';
import type { ToolCallRequest } from '../types.js';
import { reject } from './run-calls.js';
import { hookContext } from './run-hooks.js';
import type { RunState } from './run-state.js';

/** What the resolving step decided for one call (`key`: its slot): the call that runs, or the error result it gets. */
export type CallResolution = { readonly key: string; readonly call: ToolCallRequest } | { readonly key: string; readonly error: string };

/**
 * The resolving step's work for the current batch: asks the hooks about every call that has no
 * result yet (a resumed turn's stored results are not asked again). Resolves with the calls a
 * hook resolved (the others stay as the model sent them). Never rejects.
 */
export function resolveInput(state: RunState): { resolve(): Promise<CallResolution[]> } {
  return { resolve: () => resolveCalls(state) };
}

async function resolveCalls(state: RunState): Promise<CallResolution[]> {
  const hooks = state.hookSet.hooks.filter((h) => typeof h.resolveToolCall === 'function');
  const ctx = hookContext(state);
  const out: CallResolution[] = [];
  for (const slot of state.batch.slots) {
    if (slot.state !== 'pending') continue;
    try {
      for (const hook of hooks) {
        // Each hook gets its own copy: one that edits the call in place changes nothing.
        const answer = await hook.resolveToolCall!({ ...slot.asked }, ctx);
        if (answer === undefined || answer === null) continue;
        out.push({ key: slot.key, call: resolvedCall(slot.asked, answer) });
        break;
      }
    } catch (error) {
      out.push({ key: slot.key, error: `Tool error: resolveToolCall hook failed: ${error instanceof Error ? error.message || error.name : String(error)}` });
    }
  }
  return out;
}

/** The resolved call with the model's id. @throws Error (the call's error text) for an answer that is not a call. */
function resolvedCall(asked: ToolCallRequest, answer: unknown): ToolCallRequest {
  const given = answer as Partial<ResolvedToolCall> | null;
  const args = typeof given === 'object' && given !== null ? given.arguments : undefined;
  if (typeof given !== 'object' || given === null || typeof given.name !== 'string' || given.name === '' || !(typeof args === 'string' || (typeof args === 'object' && args !== null && !Array.isArray(args)))) {
    throw new Error(`it must return { name, arguments } (a tool name, and arguments as JSON text or an object) or nothing, got ${shown(answer)}`);
  }
  return { id: asked.id, name: given.name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}

function shown(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * `applyResolutions` (a chart action): resolved calls replace the model's in their slots (a
 * resolved call to a sequential tool makes the whole batch sequential); a failed resolution is
 * the call's error result now (no tool_call_started, as any preflight rejection).
 */
export function applyResolutions(state: RunState, resolutions: readonly CallResolution[]): void {
  const batch = state.batch;
  batch.resolved = true;
  for (const resolution of resolutions) {
    const slot = batch.byKey.get(resolution.key);
    if (!slot || slot.state !== 'pending') continue;
    if ('error' in resolution) {
      reject(state, slot, resolution.error);
      continue;
    }
    slot.call = resolution.call;
    if (state.tools.get(resolution.call.name)?.executionMode === 'sequential') batch.sequential = true;
  }
}
