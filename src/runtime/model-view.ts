/**
 * The messages a model request is sent, when the transcript holds custom roles or the agent
 * has transformContext / convertToModel hooks: transcript → transformContext (hooks in order)
 * → convertToModel (the last hook's, or drop custom roles) → the request's messages. Then
 * contextPolicy compacts that view and beforeModelCall shapes it. View only: each step gets a
 * copy, the transcript never changes.
 */
import { HookError, UserError } from '../errors.js';
import { dropCustomMessages, isCustomMessage } from '../context/custom-messages.js';
import type { Message, ModelMessage } from '../types.js';
import { hasHook, hookContext } from './run-hooks.js';
import type { RunState } from './run-state.js';

/** How far each run's transcript was scanned for custom roles, and whether one was seen (so a turn scans only its new messages). */
const scanned = new WeakMap<RunState, { upTo: number; found: boolean; of: readonly Message[] }>();

/** Whether the transcript holds a message of a custom role (scans only what was added since the last ask). */
function holdsCustomMessages(state: RunState): boolean {
  const transcript = state.transcript;
  let scan = scanned.get(state);
  // A handoff's input filter may rewrite the transcript: scan it again from the start.
  if (!scan || scan.of !== transcript || scan.upTo > transcript.length) scan = { upTo: 0, found: false, of: transcript };
  if (!scan.found) {
    for (let i = scan.upTo; i < transcript.length; i++) {
      if (isCustomMessage(transcript[i]!)) {
        scan.found = true;
        break;
      }
    }
  }
  scan.upTo = transcript.length;
  scanned.set(state, scan);
  return scan.found;
}

/** Whether this request needs the conversion (otherwise the transcript is the request's messages as it is). */
export function needsModelView(state: RunState): boolean {
  return hasHook(state.hookSet, 'transformContext') || hasHook(state.hookSet, 'convertToModel') || holdsCustomMessages(state);
}

/**
 * The model's messages for the next request. @throws HookError when a hook throws or answers
 * with something else than messages (convertToModel: other than user, assistant and tool ones).
 */
export async function modelView(state: RunState): Promise<ModelMessage[]> {
  // The active agent's hooks and its plugins' (a plugin may bring these hooks too).
  const hookSet = state.hookSet;
  const ctx = hookContext(state);
  let messages: readonly Message[] = state.transcript;
  let copied = false;
  // The first hook gets a deep copy (later ones the list before them): a hook may also edit it in place.
  const own = (): readonly Message[] => {
    if (!copied) messages = structuredClone(messages) as Message[];
    copied = true;
    return messages;
  };
  for (const hooks of hookSet.hooks) {
    if (!hooks.transformContext) continue;
    let changed: unknown;
    try {
      changed = await hooks.transformContext(own(), ctx);
    } catch (error) {
      throw new HookError('transformContext', error);
    }
    if (changed === undefined) continue;
    if (!Array.isArray(changed)) throw new HookError('transformContext', new UserError(`transformContext must return an array of messages or nothing, got ${typeof changed}.`));
    messages = changed as Message[];
    copied = true;
  }
  let convert: ((messages: readonly Message[], c: typeof ctx) => readonly ModelMessage[] | Promise<readonly ModelMessage[]>) | undefined;
  for (const hooks of hookSet.hooks) if (hooks.convertToModel) convert = hooks.convertToModel.bind(hooks);
  if (!convert) return dropCustomMessages(messages);
  let converted: unknown;
  try {
    converted = await convert(own(), ctx);
  } catch (error) {
    throw new HookError('convertToModel', error);
  }
  if (!Array.isArray(converted)) throw new HookError('convertToModel', new UserError(`convertToModel must return an array of messages, got ${typeof converted}.`));
  converted.forEach((m: { role?: unknown } | null, i) => {
    if (typeof m !== 'object' || m === null || typeof m.role !== 'string' || isCustomMessage(m as { role: string }) || m.role === 'system') {
      const role = typeof m === 'object' && m !== null ? JSON.stringify(m.role) : 'none';
      throw new HookError('convertToModel', new UserError(`convertToModel returned message ${i + 1} with role ${role}; the model is sent only user, assistant and tool messages.`));
    }
  });
  return converted as ModelMessage[];
}
