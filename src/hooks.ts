import type { ZodType } from 'zod';
import type { Tool } from './tools/tool.js';
import type { AssistantMessage, Message, ModelMessage, ToolCallRequest, ToolResultMessage, Usage } from './types.js';

/** What every hook and guardrail is told about the run it runs in. */
export interface HookContext<Deps = any> {
  readonly runId: string;
  readonly agent: { readonly name: string };
  readonly turn: number;
  readonly deps: Deps;
  /** The transcript's messages: a new array on each read (changing it changes nothing in the run). */
  readonly transcript: readonly Message[];
  readonly usage: Readonly<Usage>;
  /** The run's shared state, the same object as the tools' `ctx.extra` (see RunContext.extra). */
  readonly extra: Record<string, unknown>;
}

/**
 * The part of a model request `beforeModelCall` may change (for this request only). The hook
 * gets a copy: it may return changes or edit `messages` in place; the transcript, the log and
 * the session never change.
 */
export interface ModelCallView {
  readonly system: string;
  readonly messages: readonly Message[];
}

/** What `shouldStopAfterTurn` is told about the turn that just ended. */
export interface AfterTurn<Deps = any> {
  /** The turn's reply (with its tool calls). */
  readonly message: AssistantMessage;
  /** The turn's tool results, in the order they were stored. */
  readonly toolResults: readonly ToolResultMessage[];
  /** Every message the turn added to the transcript: the reply, then its results. */
  readonly newMessages: readonly Message[];
  readonly ctx: HookContext<Deps>;
}

/** What `afterModelResponse` may ask for; undefined keeps the reply. */
export type AfterModelResponse =
  /** Discard this reply and ask the model again (a new turn: counted against maxTurns). */
  | { readonly retry: true }
  /** Keep the reply and give the model these user messages at its next request (the run goes on). */
  | { readonly inject: readonly string[] }
  /** The reply is final: its text is the output and its tool calls do not run (a message already waiting still gets a turn). */
  | { readonly stop: true }
  /**
   * Replace the reply (CubePi's reply replacement), before preflight: its text, its tool calls,
   * or both (each `{ id, name, arguments }`, `arguments` JSON text). The replaced reply is what
   * is stored, what `message_completed` carries, what the next hooks see and what the model sees
   * next (the `text_delta` events already streamed are the original's). Any other verdict of a
   * later hook still applies. A malformed replacement fails the run (HookError).
   */
  | { readonly replace: { readonly content?: string; readonly toolCalls?: readonly ToolCallRequest[] } };

/** What the afterModelResponse hooks decided together (internal): a verdict, and the reply's text and calls when a hook replaced them. */
export interface JudgedReply {
  readonly verdict?: { readonly retry: true } | { readonly inject: readonly string[] } | { readonly stop: true };
  readonly replaced?: { readonly content: string; readonly toolCalls: readonly ToolCallRequest[] };
}

/** A call as `beforeToolCall` and `afterToolCall` see it. */
export interface HookedCall {
  readonly call: ToolCallRequest;
  readonly tool: Tool;
  /** Validated arguments. */
  readonly args: unknown;
}

/**
 * What `resolveToolCall` may answer: the tool call that runs instead of the model's (CubePi's
 * tool-call resolver). It keeps the model's call id (an `id` given here is ignored).
 * `arguments` is JSON text, or an object that is written as JSON.
 */
export interface ResolvedToolCall {
  readonly name: string;
  readonly arguments: string | Readonly<Record<string, unknown>>;
}

/** A call's result as `afterToolCall` sees it. */
export interface HookedResult {
  readonly output: string;
  readonly isError: boolean;
  readonly result: unknown;
}

/**
 * Hooks on an agent. Each may be async. Several hook objects (`hooks: [a, b]`) compose in
 * order: request views pass from one to the next; the first `block`, `retry` or `stop` wins.
 * Model-side hooks (beforeModelCall, afterModelResponse, onRunEnd) that throw fail the run
 * with a HookError; tool-side hooks (beforeToolCall, afterToolCall) that throw give the call
 * an error result. A hook never hangs the run past its own promise.
 */
export interface AgentHooks<Deps = any> {
  /**
   * The first step of each model request's view (pi-agent-core's and CubePi's
   * transformContext): may return another list of the transcript's messages, custom roles
   * included (prune, reorder, add context). Several hooks chain in order, each seeing the one
   * before's list. View only: it gets a copy; the transcript, the log and the session never
   * change. Sync or async; a throw (or an answer that is not an array) fails the run with a
   * HookError. Then convertToModel, then contextPolicy, then beforeModelCall.
   */
  transformContext?(messages: readonly Message[], ctx: HookContext<Deps>): void | readonly Message[] | Promise<void | readonly Message[]>;
  /**
   * Turns the (transformed) transcript into the messages the model is sent (pi-agent-core's
   * convertToLlm, CubePi's convert_to_llm): drop or rewrite messages of custom roles, e.g. a
   * note as a user message. The last hook object that has one decides (as CubePi's); without
   * one, messages of custom roles are dropped. Its answer may hold only user, assistant and
   * tool messages. View only (it gets a copy). Sync or async; a throw or a bad answer fails the
   * run with a HookError.
   */
  convertToModel?(messages: readonly Message[], ctx: HookContext<Deps>): readonly ModelMessage[] | Promise<readonly ModelMessage[]>;
  /** May return a changed view of the request (view only: the transcript and the log never change). */
  beforeModelCall?(request: ModelCallView, ctx: HookContext<Deps>): void | Partial<ModelCallView> | Promise<void | Partial<ModelCallView>>;
  afterModelResponse?(reply: AssistantMessage, ctx: HookContext<Deps>): void | AfterModelResponse | Promise<void | AfterModelResponse>;
  /**
   * CubePi's tool-call resolver: maps a call of the model to another call (a dispatcher: one
   * tool the model sees, routing to tools hidden with `exposeToModel: false`). Asked in the
   * chart's `resolving` step, before preflight, once per call of the reply, in request order;
   * with several hooks the first non-empty answer wins (undefined or null: no answer). The
   * resolved call keeps the model's call id and is what preflight checks, approvals, policies,
   * beforeToolCall, the tool and the tool events see (events carry the model's call as
   * `requested`). Sync or async. A throw or a malformed answer gives the call an error result
   * ("Tool error: resolveToolCall hook failed: …"); the run goes on.
   */
  resolveToolCall?(call: ToolCallRequest, ctx: HookContext<Deps>): void | null | ResolvedToolCall | Promise<void | null | ResolvedToolCall>;
  /** `{ block: reason }` gives the call an error result without running it (the completion event has `blockedBy`). Runs before the approval. */
  beforeToolCall?(call: HookedCall, ctx: HookContext<Deps>): void | { readonly block: string } | Promise<void | { readonly block: string }>;
  /** May change what the model sees of the result. */
  afterToolCall?(call: HookedCall, result: HookedResult, ctx: HookContext<Deps>): void | Partial<Pick<HookedResult, 'output' | 'isError'>> | Promise<void | Partial<Pick<HookedResult, 'output' | 'isError'>>>;
  /**
   * CubePi's soft stop, asked after every turn whose reply had tool calls, once all of its
   * results are in: true skips the automatic next model call (the run completes with the
   * turn's results as its output, as a terminating batch does). A queued steer, follow-up or
   * mailbox message still starts another turn, and onRunEnd may still continue the run: only
   * the model call the tool results would have triggered is skipped. (pi-agent-core's hard
   * stop, an abort, ends the run even with messages queued; troupe's is `afterModelResponse`'s
   * `{ stop: true }` or `handle.cancel()`.) With several hooks, any true stops. Sync or async;
   * a throw fails the run with a HookError.
   */
  shouldStopAfterTurn?(turn: AfterTurn<Deps>): boolean | Promise<boolean>;
  /** Runs when the run would complete; returning user messages continues the run with them. */
  onRunEnd?(result: { readonly output: string; readonly finalOutput: unknown }, ctx: HookContext<Deps>): void | readonly string[] | Promise<void | readonly string[]>;
}

/** A guardrail's verdict: a tripwire ends the run with GuardrailTripped (info attached). */
export interface GuardrailVerdict {
  readonly tripwire: boolean;
  readonly info?: unknown;
}

/** Checks the run's input (its messages) or its final output. May be async; a throw trips it. */
export type Guardrail<Value = unknown, Deps = any> = (value: Value, ctx: HookContext<Deps>) => GuardrailVerdict | Promise<GuardrailVerdict>;

/** Agent options for structured output and guardrails. */
export interface OutputOptions<Deps = any> {
  /** The final reply must be JSON that parses and validates: result.finalOutput is the parsed value. One repair turn, then OutputValidationError. */
  outputType?: ZodType;
  inputGuardrails?: readonly Guardrail<readonly Message[], Deps>[];
  outputGuardrails?: readonly Guardrail<unknown, Deps>[];
}
