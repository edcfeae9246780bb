import { z } from 'zod';
import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import { portOf } from '../tools/call-context.js';
import type { RunContext } from '../tools/context.js';
import { tool, type Tool } from '../tools/tool.js';
import type { Message } from '../types.js';
import { handoffToolName } from './slug.js';

/** Rewrites the transcript the next agent sees after a handoff. */
export type HandoffInputFilter = (transcript: readonly Message[]) => Message[];

/**
 * The agent a handoff transfers to: an `Agent` (typed structurally here so this module, which
 * the Agent class uses, does not depend on it).
 */
export interface HandoffTarget {
  readonly name: string;
}

export interface HandoffOptions<Deps = any> {
  /** Tool name; default `transfer_to_<slug of the agent name>`. */
  name?: string;
  description?: string;
  /** Runs when this handoff wins (never for a handoff rejected as a later one in the turn); throwing cancels the transfer. */
  onHandoff?: (ctx: RunContext<Deps>, input: { reason?: string }) => void | Promise<void>;
  /** Rewrites the transcript the target agent sees. */
  inputFilter?: HandoffInputFilter;
}

const HANDOFF_KEYS = optionKeys<HandoffOptions>({ name: true, description: true, onHandoff: true, inputFilter: true });

const handoffParameters = z.object({
  reason: z.string().optional().describe('Why the conversation is being transferred (optional).'),
});

/**
 * A tool that transfers the conversation to `target`. Handoff tools are always barriers and
 * only the first one of a turn takes effect; the switch happens when the turn ends.
 */
export function handoff<Deps = any>(target: HandoffTarget, options: HandoffOptions<Deps> = {}): Tool<Deps> {
  checkOptionKeys(options, HANDOFF_KEYS, 'handoff');
  const base = tool({
    name: options.name ?? handoffToolName(target.name),
    description: options.description ?? `Transfer the conversation to the ${target.name} agent.`,
    parameters: handoffParameters,
    parallel: false,
    execute: async ({ reason }, ctx: RunContext<Deps>) => {
      const port = portOf(ctx);
      if (!port) throw new UserError('handoff tools can only run inside a troupe run.');
      await options.onHandoff?.(ctx, reason === undefined ? {} : { reason });
      // A message to the run actor: the switch happens when the turn ends.
      port.send({ type: 'handoff.request', target, inputFilter: options.inputFilter });
      return `Transferred to ${target.name}${reason ? ` (${reason})` : ''}`;
    },
  });
  return { ...base, source: 'handoffs', handoff: { targetName: target.name, target, options } };
}
