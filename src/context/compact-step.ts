import type { Message, ToolResultMessage } from '../types.js';
import type { ResolvedPolicy } from './policy.js';
import { RECALL_TOOL_NAME, clearedText, offloadedText, type ViewRenderer, type ViewState } from './view.js';

export type CompactionStage = 'offload' | 'clear' | 'summarize';

/** What one compaction did, by transcript index. */
export interface StepReport {
  readonly stages: readonly CompactionStage[];
  readonly offloaded: readonly number[];
  readonly cleared: readonly number[];
  /** Transcript indices newly inside the summary. */
  readonly summarized: readonly number[];
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

export interface StepInput {
  readonly messages: readonly Message[];
  /** The request sees `messages[0, end)`. */
  readonly end: number;
  /** Nothing at or after this index is touched (the latest reply and its results). */
  readonly protectFrom: number;
  /** Estimated tokens of the system prompt and tool schemas. */
  readonly overhead: number;
  /** Compact when the estimate is over this (undefined: only when forced). */
  readonly limit: number | undefined;
  /** After an overflow error: compact to `compactTo` of this, whatever the estimate says. */
  readonly forcedLimit: number | undefined;
  readonly policy: ResolvedPolicy;
}

/** Writes a summary of `segment` (continuing `previous`, if any). */
export type Summarizer = (previous: string | undefined, segment: readonly Message[], range: { readonly from: number; readonly to: number }) => Promise<{ text: string }>;

/** A guess at a new summary's size, to choose how much to summarise before it exists. */
const SUMMARY_GUESS_TOKENS = 256;

/**
 * One compaction decision at one request point: a function of the state before, the
 * transcript prefix and the policy (and the summariser's answer). Unchanged state (the same
 * object) when the estimate is within the limit. Stages run cheapest first and stop as
 * soon as the estimate is at or under the target; each goes oldest first.
 */
export async function compactStep(state: ViewState, input: StepInput, renderer: ViewRenderer, summarize: Summarizer | undefined): Promise<{ state: ViewState; report: StepReport | undefined }> {
  const { messages, end, policy } = input;
  const trigger = input.forcedLimit ?? input.limit;
  const estimate = (s: ViewState): number => input.overhead + renderer.estimateView(messages, end, s);
  const before = estimate(state);
  if (trigger === undefined || (input.forcedLimit === undefined && before <= trigger)) return { state, report: undefined };
  const target = Math.floor(trigger * policy.compactTo);
  const protectFrom = Math.min(input.protectFrom, end);
  let current = before;
  const stages: CompactionStage[] = [];
  const offloaded: number[] = [];
  const cleared: number[] = [];
  let summarized: number[] = [];
  let next = state;

  const rewrite = (kind: 'offload' | 'clear', eligible: (index: number) => boolean): void => {
    // Copied on the first change only; the new state owns the copy, so later adds need no new state.
    let set: Set<number> | undefined;
    const touched = kind === 'offload' ? offloaded : cleared;
    let i = Math.max(next.cut, kind === 'offload' ? next.offloadFrom : next.clearFrom);
    for (; i < protectFrom && current > target; i++) {
      if (messages[i]!.role !== 'tool' || !eligible(i)) continue;
      const was = renderer.estimate(renderer.messageAt(messages, i, next)!);
      if (!set) {
        set = new Set(kind === 'offload' ? next.offloaded : next.cleared);
        next = kind === 'offload' ? { ...next, offloaded: set } : { ...next, cleared: set };
      }
      set.add(i);
      current += renderer.estimate(renderer.messageAt(messages, i, next)!) - was;
      touched.push(i);
    }
    if (touched.length === 0) return;
    next = kind === 'offload' ? { ...next, offloadFrom: i } : { ...next, clearFrom: i };
    stages.push(kind);
  };

  if (policy.offload && current > target) {
    const { minChars, previewChars } = policy.offload;
    rewrite('offload', (i) => {
      const m = messages[i]! as ToolResultMessage;
      // A recalled result was asked for in full (offloading it again would loop), and a
      // preview longer than the result saves nothing.
      return (
        !next.offloaded.has(i) && !next.cleared.has(i) && m.name !== RECALL_TOOL_NAME && m.content.length >= minChars && offloadedText(m, previewChars).length < m.content.length
      );
    });
  }
  if (policy.clear && current > target) {
    rewrite('clear', (i) => {
      if (next.cleared.has(i)) return false;
      // Clearing a result shorter than its marker would grow the request.
      return clearedText(messages[i] as ToolResultMessage).length < renderer.messageAt(messages, i, next)!.content.length;
    });
  }
  if (policy.summarize && summarize && current > target) {
    const cut = summaryCut(messages, end, next, protectFrom, current - target, renderer);
    if (cut > next.cut) {
      const segment: Message[] = [];
      for (let i = next.cut; i < cut; i++) segment.push(renderer.messageAt(messages, i, next)!);
      const { text } = await summarize(next.summary, segment, { from: next.cut, to: cut });
      summarized = range(next.cut, cut);
      next = { ...next, cut, summary: text };
      current = estimate(next);
      stages.push('summarize');
    }
  }
  if (stages.length === 0) return { state, report: undefined };
  renderer.knowTotal(next, end, current - input.overhead);
  return { state: next, report: { stages, offloaded, cleared, summarized, tokensBefore: before, tokensAfter: current } };
}

/**
 * Where a new summary ends: the first boundary after which enough is summarised to save
 * `excess` tokens (else the last boundary before `protectFrom`). A boundary is an index of a
 * user or assistant message with every earlier call answered, so no call is ever separated
 * from its result.
 */
export function summaryCut(messages: readonly Message[], end: number, state: ViewState, protectFrom: number, excess: number, renderer: ViewRenderer): number {
  const oldSummary = renderer.summaryAt(state);
  const guess = (oldSummary ? renderer.estimate(oldSummary) : 0) + SUMMARY_GUESS_TOKENS;
  let saved = oldSummary ? renderer.estimate(oldSummary) : 0;
  let open = 0;
  let best = state.cut;
  for (let i = state.cut; i <= protectFrom && i < end; i++) {
    const message = messages[i]!;
    if (message.role !== 'tool' && open === 0 && i > state.cut) {
      best = i;
      if (saved - guess >= excess) return best;
    }
    if (message.role === 'assistant') open += message.toolCalls.length;
    else if (message.role === 'tool') open = Math.max(0, open - 1);
    saved += renderer.estimate(renderer.messageAt(messages, i, state)!);
  }
  return best;
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, k) => from + k);
}
