import type { Agent } from '../agent.js';
import { ToolTimeout, UserError } from '../errors.js';
import type { RunContext } from '../tools/context.js';
import type { Tool } from '../tools/tool.js';
import { waitForEvent } from '../waits/wait-for.js';
import type { ToolOutcome } from './explore-types.js';
import { abortedBy, type PathDriver } from './path-driver.js';

/** The outcomes a tool's attempts are explored with when the options name none. */
export function defaultOutcomes(agent: Agent, tool: Tool): ToolOutcome[] {
  const outcomes: ToolOutcome[] = [{ returns: `${tool.name} done` }, { throws: `${tool.name} failed` }];
  if ((tool.timeoutMs ?? agent.defaultToolTimeoutMs) !== undefined) outcomes.push({ timesOut: true });
  return outcomes;
}

/** The option names a choice point offers for `outcomes` (a wait is two: resolved and timed out). */
function optionNames(outcomes: readonly ToolOutcome[]): string[] {
  return outcomes.flatMap((o) => {
    if (o === 'real') return ['real'];
    if ('returns' in o) return ['returns'];
    if ('throws' in o) return ['throws'];
    if ('timesOut' in o) return ['times out'];
    return ['wait resolved', 'wait timed out'];
  });
}

/** The outcome behind option `index` of `optionNames(outcomes)`. */
function outcomeAt(outcomes: readonly ToolOutcome[], index: number): { outcome: ToolOutcome; timedOut: boolean } {
  let i = 0;
  for (const outcome of outcomes) {
    const width = outcome !== 'real' && 'waitsForEvent' in outcome ? 2 : 1;
    if (index < i + width) return { outcome, timedOut: index - i === 1 };
    i += width;
  }
  throw new Error(`no outcome at ${index}`);
}

/**
 * `tool` with its code replaced by a choice point: each attempt takes one of `outcomes` (or
 * a cancel). Everything else of the tool (name, schema, approval, retries, timeout, barrier)
 * stays, so the runtime treats the call as it would the real one, except that nothing takes
 * real time: a timed-out attempt throws the ToolTimeout the runtime's timer would (at once,
 * instead of after `timeoutMs`), and retries follow without the backoff pause.
 * `timeoutMs`: the call's timeout (the tool's, else its agent's default).
 * @throws UserError when `outcomes` has `{ timesOut: true }` and the call has no timeout.
 */
export function scriptedTool(tool: Tool, outcomes: readonly ToolOutcome[], driver: PathDriver, timeoutMs: number | undefined): Tool {
  if (outcomes.length === 1 && outcomes[0] === 'real') return tool;
  if (timeoutMs === undefined && outcomes.some((o) => o !== 'real' && 'timesOut' in o)) {
    throw new UserError(`exploreAgent: tools.${tool.name} has { timesOut: true }, but the tool has no timeout (give it timeoutMs, or its agent defaultToolTimeoutMs).`);
  }
  const names = driver.withCancel(optionNames(outcomes));
  const execute = async (args: unknown, ctx: RunContext<unknown>): Promise<unknown> => {
    const attempt = driver.nextAttempt(ctx.runId, ctx.callId);
    const at = `${tool.name} ${ctx.callId}${attempt > 1 ? ` attempt ${attempt}` : ''}`;
    driver.log.push({ kind: 'tool', runId: ctx.runId, callId: ctx.callId, tool: tool.name, alwaysGated: tool.needsApproval === true });
    // A cancel was chosen and is on its way: this attempt is running when it arrives.
    if (driver.cancelling) return abortedBy(ctx.signal);
    const took = driver.choose(at, names);
    if (names[took] === 'cancel') {
      driver.cancel(at);
      return abortedBy(ctx.signal);
    }
    const { outcome, timedOut } = outcomeAt(outcomes, took);
    if (outcome === 'real') return tool.execute(args, ctx);
    if ('returns' in outcome) return outcome.returns;
    if ('throws' in outcome) throw new Error(outcome.throws);
    // What the runtime's timer does at timeoutMs, done now: the attempt fails with ToolTimeout.
    if ('timesOut' in outcome) throw new ToolTimeout(tool.name, timeoutMs!);
    if (timedOut) return waitForEvent(outcome.waitsForEvent, { timeoutMs: 1 });
    driver.resolveWhenOpen.set(`${ctx.runId}/${ctx.callId}`, outcome.payload ?? null);
    return waitForEvent(outcome.waitsForEvent);
  };
  return { ...tool, execute, retryBackoffMs: () => 0 };
}
