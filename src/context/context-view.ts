import type { Message, Usage } from '../types.js';
import { compactStep, type StepReport, type Summarizer } from './compact-step.js';
import type { ResolvedPolicy } from './policy.js';
import { EMPTY_VIEW, ViewRenderer, type ViewState } from './view.js';

/** Writes one summary for the view (the caller adds its usage to the run's). */
export type SummaryWriter = (previous: string | undefined, segment: readonly Message[], signal: AbortSignal) => Promise<{ text: string; usage: Partial<Usage> }>;

export interface BuiltView {
  readonly messages: Message[];
  /** What this request's compaction did, or undefined when its view needed none. */
  readonly report: StepReport | undefined;
  /** Usage of summary requests made for this view. */
  readonly usage: Partial<Usage>;
  readonly requests: number;
  /** For an overflow: whether this view is smaller than the one the provider refused (else a retry is futile). */
  readonly shrunk: boolean;
}

/** The share of an overflowing estimate that a forced compaction aims below. */
const OVERFLOW_SHRINK = 0.75;

/**
 * One run's compacted view of its transcript.
 *
 * Determinism: the decisions are a fold over the run's request points, which the transcript
 * itself records (every assistant message answered a request that saw the messages before
 * it), with one step (compactStep) per point. A resumed run, or this object after the
 * transcript was rewritten, replays the fold and reaches the same decisions, so it sends
 * the same bytes. The step of the current request is tentative until its reply lands (a
 * retried reply recomputes the same step). Two things are not in the transcript and are
 * kept only in memory: a summary's text (a resumed run writes its summary again) and the
 * harder compaction after a provider's overflow error (a resumed run compacts by its
 * estimate, and harder again if the provider overflows again).
 */
export class ContextView {
  private committed: ViewState = EMPTY_VIEW;
  /** Transcript indices below this are folded. */
  private scanned = 0;
  /** transcript[scanned - 1] when folded: a different object means the transcript was rewritten. */
  private anchor: Message | undefined;
  /** Index of the last assistant message folded (-1: none). */
  private lastAssistant = -1;
  private readonly renderer: ViewRenderer;
  /** Summaries written, by the transcript range they cover. */
  private readonly summaries = new Map<string, string>();
  /** Request points compacted harder after an overflow error: the forced limit. */
  private readonly forced = new Map<number, number>();
  /** From this request point on, the provider's overflow taught a lower limit. */
  private learned: { readonly from: number; readonly limit: number } | undefined;
  /** The current request's step, reused when its reply lands (the fold would compute the same). */
  private tentative: { readonly end: number; readonly base: ViewState; readonly key: string; readonly state: ViewState } | undefined;
  /** Request points whose compaction was reported (a retried reply does not report again). */
  private readonly reported = new Set<string>();

  constructor(
    readonly policy: ResolvedPolicy,
    private readonly writer: SummaryWriter | undefined,
  ) {
    this.renderer = new ViewRenderer(policy.offload?.previewChars ?? 0);
  }

  /**
   * The messages the request for `messages` (the whole transcript) is sent.
   * `overflow`: the provider refused the last view of this request as too long; compact
   * harder (the latest results included). @throws ModelError when a summary fails.
   */
  async build(messages: readonly Message[], overhead: number, reason: 'threshold' | 'overflow', signal: AbortSignal): Promise<BuiltView> {
    const spend = { usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, requests: 0 };
    const summarize = this.summarizer(signal, spend);
    await this.fold(messages, overhead, summarize);
    const end = messages.length;
    let refusedTokens = Infinity;
    if (reason === 'overflow') {
      // The view the provider refused: this point's step as it was before the overflow.
      const refused = (await this.step(this.committed, messages, end, overhead, summarize)).state;
      refusedTokens = overhead + this.renderer.estimateView(messages, end, refused);
      const limit = Math.max(1, Math.floor(refusedTokens * OVERFLOW_SHRINK));
      this.forced.set(end, Math.min(this.forced.get(end) ?? limit, limit));
      this.learned = { from: end, limit: Math.min(this.learned?.limit ?? limit, limit) };
    }
    const { state, report } = await this.step(this.committed, messages, end, overhead, summarize);
    this.tentative = { end, base: this.committed, key: this.stepKey(end, overhead), state };
    const key = `${end}:${reason}`;
    const fresh = report !== undefined && !this.reported.has(key);
    if (fresh) this.reported.add(key);
    const shrunk = overhead + this.renderer.estimateView(messages, end, state) < refusedTokens;
    return { messages: this.renderer.build(messages, end, state), report: fresh ? report : undefined, usage: spend.usage, requests: spend.requests, shrunk };
  }

  /** Brings the committed state up to the last reply in `messages`. */
  private async fold(messages: readonly Message[], overhead: number, summarize: Summarizer | undefined): Promise<void> {
    if (this.scanned > messages.length || (this.scanned > 0 && messages[this.scanned - 1] !== this.anchor)) this.reset();
    for (let i = this.scanned; i < messages.length; i++) {
      if (messages[i]!.role !== 'assistant') continue;
      const known = this.tentative;
      this.committed =
        known && known.end === i && known.base === this.committed && known.key === this.stepKey(i, overhead)
          ? known.state
          : (await this.step(this.committed, messages, i, overhead, summarize)).state;
      this.lastAssistant = i;
    }
    this.scanned = messages.length;
    this.anchor = messages[messages.length - 1];
  }

  /** What a step at `end` depends on besides the state and the transcript prefix. */
  private stepKey(end: number, overhead: number): string {
    return `${overhead}:${this.forced.get(end)}:${this.learned && end >= this.learned.from ? this.learned.limit : ''}`;
  }

  private step(state: ViewState, messages: readonly Message[], end: number, overhead: number, summarize: Summarizer | undefined) {
    const forcedLimit = this.forced.get(end);
    const learned = this.learned && end >= this.learned.from ? this.learned.limit : undefined;
    const limit = learned === undefined ? this.policy.limit : Math.min(learned, this.policy.limit ?? learned);
    const protectFrom = forcedLimit !== undefined ? end : this.lastAssistantBefore(messages, end);
    return compactStep(state, { messages, end, protectFrom, overhead, limit, forcedLimit, policy: this.policy }, this.renderer, summarize);
  }

  /** The last assistant message before `end` (its results and everything after are protected); 0 when none. */
  private lastAssistantBefore(messages: readonly Message[], end: number): number {
    if (this.lastAssistant >= 0 && this.lastAssistant < end) {
      for (let i = end - 1; i > this.lastAssistant; i--) if (messages[i]!.role === 'assistant') return i;
      return this.lastAssistant;
    }
    for (let i = end - 1; i >= 0; i--) if (messages[i]!.role === 'assistant') return i;
    return 0;
  }

  private summarizer(signal: AbortSignal, spend: { usage: { inputTokens: number; outputTokens: number; totalTokens: number }; requests: number }): Summarizer | undefined {
    const writer = this.writer;
    if (!writer || !this.policy.summarize) return undefined;
    return async (previous, segment, range) => {
      const key = `${range.from}:${range.to}`;
      const known = this.summaries.get(key);
      if (known !== undefined) return { text: known };
      const { text, usage } = await writer(previous, segment, signal);
      spend.requests++;
      spend.usage.inputTokens += usage.inputTokens ?? 0;
      spend.usage.outputTokens += usage.outputTokens ?? 0;
      spend.usage.totalTokens += usage.totalTokens ?? (usage.inputTokens ?? 0) + (usage.outputTokens ?? 0);
      this.summaries.set(key, text);
      return { text };
    };
  }

  private reset(): void {
    this.committed = EMPTY_VIEW;
    this.scanned = 0;
    this.anchor = undefined;
    this.lastAssistant = -1;
    this.forced.clear();
    this.summaries.clear();
    this.tentative = undefined;
    this.renderer.reset();
  }
}
