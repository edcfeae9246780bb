import { GuardrailTripped, HookError, PluginError, UserError } from '../errors.js';
import type { AfterModelResponse, Guardrail, HookContext, HookedCall, HookedResult, JudgedReply, ModelCallView } from '../hooks.js';
import type { AssistantMessage, Message, ToolCallRequest, ToolResultMessage } from '../types.js';
import type { RunState } from './run-state.js';
import { runExtra } from './extra.js';
import type { HookSet, NamedInjector } from './hook-set.js';

export type { HookSet, NamedInjector } from './hook-set.js';


/**
 * What hooks and guardrails are told about the run (a view; they cannot change the run
 * through it): each read of `transcript` is a new array of the transcript's messages.
 */
export function hookContext(state: RunState): HookContext {
  return {
    runId: state.runId,
    agent: state.agentView,
    turn: state.turn,
    deps: state.deps,
    // A plain-JS hook that pushes to or splices the array must not change the run; copied only when read (most hooks never do).
    get transcript() {
      return state.transcript.slice();
    },
    usage: { ...state.usage },
    get extra() {
      return runExtra(state).read();
    },
  };
}

/**
 * beforeModelCall hooks in order, each seeing the view the one before returned. The first
 * gets a deep copy of the messages: a hook may change it freely (even in place) without
 * changing the transcript, the log or the session. @throws HookError
 */
export async function shapeRequest(agent: HookSet, view: ModelCallView, ctx: HookContext): Promise<ModelCallView> {
  let current: ModelCallView = { system: view.system, messages: structuredClone(view.messages) as Message[] };
  for (const hooks of agent.hooks) {
    if (!hooks.beforeModelCall) continue;
    try {
      const changed = await hooks.beforeModelCall(current, ctx);
      if (changed) current = { system: changed.system ?? current.system, messages: changed.messages ?? current.messages };
    } catch (error) {
      throw new HookError('beforeModelCall', error);
    }
  }
  return current;
}

type RequestView = { readonly system: string; readonly messages: readonly Message[] };

/**
 * The beforeModelCall step of a model request (undefined when there is nothing to do): the
 * plugins' view injectors append their entries to the request's messages (a new array: the
 * transcript never changes), then the beforeModelCall hooks see the view.
 * @throws PluginError (an injector threw or returned something that is not a message), HookError
 */
export function viewShaper(injectors: readonly NamedInjector[], hooks: HookSet, ctx: HookContext): (<R extends RequestView>(request: R) => Promise<R>) | undefined {
  const shapes = hasHook(hooks, 'beforeModelCall');
  if (injectors.length === 0 && !shapes) return undefined;
  return async (request) => {
    const messages = injectors.length === 0 ? request.messages : await injectedView(injectors, request.messages, ctx);
    return { ...request, ...(shapes ? await shapeRequest(hooks, { system: request.system, messages }, ctx) : { messages }) };
  };
}

/** `messages` plus what each injector returned, in order (a string is a user message). */
async function injectedView(injectors: readonly NamedInjector[], messages: readonly Message[], ctx: HookContext): Promise<readonly Message[]> {
  const added: Message[] = [];
  for (const { plugin, agent, inject } of injectors) {
    let given: unknown;
    try {
      given = await inject(ctx);
    } catch (error) {
      throw new PluginError(plugin, agent, 'view', error);
    }
    if (given === undefined || given === null) continue;
    const entries = typeof given === 'string' ? [{ role: 'user', content: given }] : Array.isArray(given) ? given : [given];
    for (const entry of entries as Array<Partial<Message> | null>) {
      if (typeof entry !== 'object' || entry === null || (entry.role !== 'user' && entry.role !== 'assistant' && entry.role !== 'tool') || typeof entry.content !== 'string') {
        throw new PluginError(plugin, agent, 'view', new UserError('a view injector must return a string, a message { role, content } or an array of messages'));
      }
      added.push(entry as Message);
    }
  }
  return added.length === 0 ? messages : [...messages, ...added];
}

/**
 * afterModelResponse hooks in order, each seeing the reply as the hooks before it replaced it;
 * the first retry or stop wins, injections add up, replacements apply in order. @throws HookError
 */
export async function judgeReply(agent: HookSet, reply: AssistantMessage, ctx: HookContext): Promise<JudgedReply | undefined> {
  const inject: string[] = [];
  let current = reply;
  const replaced = (): JudgedReply['replaced'] => (current === reply ? undefined : { content: current.content, toolCalls: current.toolCalls });
  for (const hooks of agent.hooks) {
    if (!hooks.afterModelResponse) continue;
    let verdict: AfterModelResponse | void;
    try {
      verdict = await hooks.afterModelResponse(current, ctx);
    } catch (error) {
      throw new HookError('afterModelResponse', error);
    }
    if (!verdict) continue;
    if ('retry' in verdict && verdict.retry) return { verdict: { retry: true } };
    if ('stop' in verdict && verdict.stop) return withReplaced({ verdict: { stop: true } }, replaced());
    if ('replace' in verdict) current = replacedReply(current, verdict.replace);
    if ('inject' in verdict) inject.push(...verdict.inject.map(String));
  }
  if (inject.length === 0 && current === reply) return undefined;
  return withReplaced(inject.length ? { verdict: { inject } } : {}, replaced());
}

function withReplaced(judged: JudgedReply, replaced: JudgedReply['replaced']): JudgedReply {
  return replaced ? { ...judged, replaced } : judged;
}

/** The reply with a hook's replacement applied. @throws HookError (a UserError cause) when the replacement is malformed. */
function replacedReply(reply: AssistantMessage, replace: unknown): AssistantMessage {
  const given = replace as { content?: unknown; toolCalls?: unknown } | null;
  const bad = (why: string) => new HookError('afterModelResponse', new UserError(`afterModelResponse returned a malformed replace: ${why}.`));
  if (typeof given !== 'object' || given === null) throw bad('it must be an object { content?, toolCalls? }');
  if (given.content !== undefined && typeof given.content !== 'string') throw bad("'content' must be a string");
  if (given.toolCalls !== undefined) {
    if (!Array.isArray(given.toolCalls)) throw bad("'toolCalls' must be an array");
    given.toolCalls.forEach((call: { id?: unknown; name?: unknown; arguments?: unknown } | null, i: number) => {
      if (typeof call !== 'object' || call === null || typeof call.id !== 'string' || typeof call.name !== 'string' || typeof call.arguments !== 'string') {
        throw bad(`tool call ${i + 1} must be { id: string, name: string, arguments: string (JSON text) }`);
      }
    });
  }
  const toolCalls = given.toolCalls === undefined ? reply.toolCalls : (given.toolCalls as ToolCallRequest[]).map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
  return { ...reply, content: given.content === undefined ? reply.content : given.content, toolCalls };
}

/** beforeToolCall hooks in order; the first block wins. Throws what a hook threw (the caller makes it the call's error). */
export async function blockReason(agent: HookSet, call: HookedCall, ctx: HookContext): Promise<string | undefined> {
  for (const hooks of agent.hooks) {
    const verdict = await hooks.beforeToolCall?.(call, ctx);
    if (verdict && typeof verdict.block === 'string') return verdict.block;
  }
  return undefined;
}

/** afterToolCall hooks in order, each seeing the result the one before returned. Throws what a hook threw. */
export async function reshapeResult(agent: HookSet, call: HookedCall, result: HookedResult, ctx: HookContext): Promise<HookedResult> {
  let current = result;
  for (const hooks of agent.hooks) {
    const changed = await hooks.afterToolCall?.(call, current, ctx);
    if (changed) current = { ...current, output: changed.output ?? current.output, isError: changed.isError ?? current.isError };
  }
  return current;
}

/** onRunEnd hooks in order; their messages continue the run. @throws HookError */
export async function runEndMessages(agent: HookSet, result: { output: string; finalOutput: unknown }, ctx: HookContext): Promise<string[]> {
  const messages: string[] = [];
  for (const hooks of agent.hooks) {
    if (!hooks.onRunEnd) continue;
    try {
      const more = await hooks.onRunEnd(result, ctx);
      if (more) messages.push(...more.map(String));
    } catch (error) {
      throw new HookError('onRunEnd', error);
    }
  }
  return messages;
}

/** Runs guardrails in parallel; the first tripwire (or throw) rejects with GuardrailTripped. */
export async function checkGuardrails<V>(kind: 'input' | 'output', guardrails: readonly Guardrail<V>[], value: V, ctx: HookContext): Promise<void> {
  await Promise.all(
    guardrails.map(async (guardrail, index) => {
      const name = guardrail.name || `#${index + 1}`;
      let verdict;
      try {
        verdict = await guardrail(value, ctx);
      } catch (error) {
        throw new GuardrailTripped(kind, name, { error: error instanceof Error ? error.message : String(error) });
      }
      if (verdict?.tripwire) throw new GuardrailTripped(kind, name, verdict.info);
    }),
  );
}

/** Whether any hook object of the agent has this hook (so the chart takes its slower path only when needed). */
export function hasHook(agent: HookSet, name: 'resolveToolCall' | 'transformContext' | 'convertToModel' | 'beforeModelCall' | 'afterModelResponse' | 'beforeToolCall' | 'afterToolCall' | 'shouldStopAfterTurn' | 'onRunEnd'): boolean {
  // Most agents have no hooks: answer without a scan on the per-call path.
  return agent.hooks.length > 0 && agent.hooks.some((h) => typeof h[name] === 'function');
}

/**
 * The afterTurn state's work: the agent's shouldStopAfterTurn hooks on the turn that just
 * ended, in order; resolves true as soon as one says stop. Rejects with HookError.
 */
export function stopAfterTurnInput(state: RunState): { check(): Promise<boolean> } {
  const agent = state.hookSet;
  const message = state.batch.reply!;
  const from = state.transcript.lastIndexOf(message);
  const newMessages = from < 0 ? [message] : state.transcript.slice(from);
  const toolResults = newMessages.filter((m): m is ToolResultMessage => m.role === 'tool');
  const turn = { message, toolResults, newMessages, ctx: hookContext(state) };
  return {
    check: async () => {
      for (const hooks of agent.hooks) {
        if (!hooks.shouldStopAfterTurn) continue;
        let stop: unknown;
        try {
          stop = await hooks.shouldStopAfterTurn(turn);
        } catch (error) {
          throw new HookError('shouldStopAfterTurn', error);
        }
        if (stop === true) return true;
      }
      return false;
    },
  };
}
