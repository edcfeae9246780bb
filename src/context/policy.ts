import { UserError } from '../errors.js';
import { checkOptionKeys, optionKeys } from '../option-keys.js';
import type { Model } from '../models/model.js';

/**
 * View-only compaction of what the model is sent (`contextPolicy` on an agent or on the run
 * options; the run option wins). The run's transcript, its checkpoint log and its session
 * always keep every message in full: only the request's `messages` change.
 *
 * When the estimated request (system prompt, tool schemas and messages, about four
 * characters a token) goes over `maxInputTokens`, the view is compacted down to
 * `compactTo` of it, cheapest stage first, oldest messages first, never touching the latest
 * reply and the results it asked for:
 * 1. offload: a tool result of at least `offload.minChars` characters becomes a preview and
 *    a pointer to the `recall_tool_result` tool (which returns the stored result in full);
 * 2. clear: a result is replaced by a short marker;
 * 3. summarize: the oldest turns become one summary message written by a model call.
 * Decisions are sticky (offloaded stays offloaded, cleared stays cleared, a summary is
 * reused), so requests between two compactions extend each other byte for byte. A call is
 * never separated from its result. Every compaction emits `context_compacted`.
 *
 * A provider's context-overflow error compacts harder (the latest results included, to
 * `compactTo` of three quarters of the overflowing estimate) and retries the request once;
 * a second overflow fails the run with `ContextOverflowError`.
 */
export interface ContextPolicy {
  /** Compact when the estimated request is over this many tokens (per request; not the run's budget). */
  maxInputTokens?: number;
  /** The model's context window in tokens: without `maxInputTokens`, compaction starts at 80% of it. */
  contextWindow?: number;
  /** A compaction goes down to this fraction of the limit (0 < compactTo < 1). Default 0.6. */
  compactTo?: number;
  /** Stage 1; false turns it off. */
  offload?: false | { minChars?: number; previewChars?: number };
  /** Stage 2; false turns it off. */
  clear?: false;
  /**
   * Stage 3, off unless given. `model` writes the summary (default: the run's model, asked
   * with the run's id, so a ScriptedModel serves it from the run's script); `instructions`
   * is its system prompt. Its usage counts toward the run's usage and budget.
   */
  summarize?: false | { model?: Model; instructions?: string };
}

/** A policy with every default filled in. */
export interface ResolvedPolicy {
  /** undefined: compaction happens only on a provider's overflow error. */
  readonly limit: number | undefined;
  readonly compactTo: number;
  readonly offload: { readonly minChars: number; readonly previewChars: number } | undefined;
  readonly clear: boolean;
  readonly summarize: { readonly model: Model | undefined; readonly instructions: string } | undefined;
}

export const DEFAULT_OFFLOAD_MIN_CHARS = 4_000;
export const DEFAULT_PREVIEW_CHARS = 500;
export const DEFAULT_COMPACT_TO = 0.6;
export const DEFAULT_SUMMARY_INSTRUCTIONS =
  'Summarize the conversation below for the assistant that continues it. Keep the facts, decisions, open tasks, names and numbers that still matter. Reply with the summary only.';

const POLICY_KEYS = optionKeys<ContextPolicy>({ maxInputTokens: true, contextWindow: true, compactTo: true, offload: true, clear: true, summarize: true });
const OFFLOAD_KEYS = optionKeys<{ minChars?: number; previewChars?: number }>({ minChars: true, previewChars: true });
const SUMMARIZE_KEYS = optionKeys<{ model?: Model; instructions?: string }>({ model: true, instructions: true });

/** Fills in the defaults. @throws UserError on a malformed policy (so a typo never silently turns compaction off). */
export function resolvePolicy(policy: ContextPolicy): ResolvedPolicy {
  if (typeof policy !== 'object' || policy === null) throw new UserError(`contextPolicy must be an object, got ${policy === null ? 'null' : typeof policy}.`);
  checkOptionKeys(policy, POLICY_KEYS, 'contextPolicy', 'field');
  if (typeof policy.offload === 'object' && policy.offload !== null) checkOptionKeys(policy.offload, OFFLOAD_KEYS, 'contextPolicy.offload', 'field');
  if (typeof policy.summarize === 'object' && policy.summarize !== null) checkOptionKeys(policy.summarize, SUMMARIZE_KEYS, 'contextPolicy.summarize', 'field');
  positive('maxInputTokens', policy.maxInputTokens);
  positive('contextWindow', policy.contextWindow);
  const compactTo = policy.compactTo ?? DEFAULT_COMPACT_TO;
  if (typeof compactTo !== 'number' || !(compactTo > 0 && compactTo < 1)) throw new UserError(`contextPolicy.compactTo must be a number between 0 and 1 (exclusive), got ${String(compactTo)}.`);
  if (policy.clear !== undefined && policy.clear !== false) throw new UserError(`contextPolicy.clear must be false or left out, got ${String(policy.clear)}.`);
  const offload = policy.offload === false ? undefined : { minChars: policy.offload?.minChars ?? DEFAULT_OFFLOAD_MIN_CHARS, previewChars: policy.offload?.previewChars ?? DEFAULT_PREVIEW_CHARS };
  if (offload) {
    positive('offload.minChars', offload.minChars);
    if (!Number.isInteger(offload.previewChars) || offload.previewChars < 0) throw new UserError(`contextPolicy.offload.previewChars must be a non-negative integer, got ${String(offload.previewChars)}.`);
  }
  const summarize = policy.summarize ? { model: policy.summarize.model, instructions: policy.summarize.instructions ?? DEFAULT_SUMMARY_INSTRUCTIONS } : undefined;
  if (summarize?.model !== undefined && typeof summarize.model?.stream !== 'function') throw new UserError('contextPolicy.summarize.model must be a Model (an object with stream()).');
  const limit = policy.maxInputTokens ?? (policy.contextWindow !== undefined ? Math.floor(policy.contextWindow * 0.8) : undefined);
  return { limit, compactTo, offload, clear: policy.clear !== false, summarize };
}

function positive(name: string, value: unknown): void {
  if (value !== undefined && !(typeof value === 'number' && Number.isInteger(value) && value > 0)) {
    throw new UserError(`contextPolicy.${name} must be a positive integer, got ${String(value)}.`);
  }
}

/** The run option's policy, else the active agent's. */
export function activePolicy(run: { readonly options: { readonly contextPolicy?: ContextPolicy }; readonly agent?: { readonly contextPolicy?: ContextPolicy } }): ContextPolicy | undefined {
  return run.options.contextPolicy ?? run.agent?.contextPolicy;
}
