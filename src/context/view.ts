import type { Message, ToolResultMessage, UserMessage } from '../types.js';
import { estimateMessage } from './estimate.js';

/** The name of the tool that returns a stored result in full. */
export const RECALL_TOOL_NAME = 'recall_tool_result';

/**
 * The sticky compaction decisions of one run, by transcript index. Immutable: a step
 * returns a new state, so a tentative step (a request whose reply may be retried) never
 * disturbs the committed one.
 */
export interface ViewState {
  /** Tool results shown as a preview plus a pointer to recall_tool_result. */
  readonly offloaded: ReadonlySet<number>;
  /** Tool results shown as a marker (a cleared result stays cleared, offloaded or not). */
  readonly cleared: ReadonlySet<number>;
  /** Messages before this index are replaced by `summary`. Always a boundary no call/result pair crosses. */
  readonly cut: number;
  readonly summary: string | undefined;
  /**
   * Every result before this index was looked at by the offload (clear) stage and is
   * decided for good: rewritten, or never eligible (its content never changes). Later
   * compactions start here, so one costs the same at turn 200 as at turn 20.
   */
  readonly offloadFrom: number;
  readonly clearFrom: number;
}

export const EMPTY_VIEW: ViewState = { offloaded: new Set(), cleared: new Set(), cut: 0, summary: undefined, offloadFrom: 0, clearFrom: 0 };

export const SUMMARY_HEADER = '[Summary of the earlier conversation]';

export function summaryMessage(summary: string): UserMessage {
  return { role: 'user', content: `${SUMMARY_HEADER}\n${summary}` };
}

/** The first `count` code points of `text` (never splitting a surrogate pair), without walking the rest. */
function headOf(text: string, count: number): { text: string; points: number } {
  let points = 0;
  let end = 0;
  for (const point of text) {
    if (points === count) break;
    points++;
    end += point.length;
  }
  return { text: text.slice(0, end), points };
}

export function offloadedText(result: ToolResultMessage, previewChars: number): string {
  const { text: preview, points } = headOf(result.content, previewChars);
  return (
    `[Result of ${result.name} offloaded to save context: ${result.content.length} chars. Its first ${points} chars:]\n` +
    `${preview}\n` +
    `[Call ${RECALL_TOOL_NAME} with {"callId":${JSON.stringify(result.callId)}} for the full result.]`
  );
}

export function clearedText(result: ToolResultMessage): string {
  return `[Result of ${result.name} cleared to save context. Call ${RECALL_TOOL_NAME} with {"callId":${JSON.stringify(result.callId)}} to see it again.]`;
}

/**
 * Builds the messages one request is sent, and estimates their tokens. Rewritten messages
 * are made once per transcript index and reused, so consecutive requests share their
 * bytes (and a long run does not rebuild its history every turn).
 */
export class ViewRenderer {
  /** Rewritten results by transcript index, one map per kind (views of several states are built in one request). */
  private readonly rewritten = { offloaded: new Map<number, ToolResultMessage>(), cleared: new Map<number, ToolResultMessage>() };
  private readonly tokens = new WeakMap<object, number>();
  private summaryView: { readonly text: string; readonly message: UserMessage } | undefined;
  /** The latest estimate per state, extended as the transcript grows (a long run does not re-add its history every turn). */
  private totals = new WeakMap<ViewState, { end: number; total: number }>();
  /** The latest view built, extended in place when the next request has the same state (as the live transcript is). */
  private lastBuilt: { state: ViewState; end: number; messages: Message[] } | undefined;

  constructor(private readonly previewChars: number) {}

  /** Message `index` of `messages` as `state` shows it (undefined for a summarised one). */
  messageAt(messages: readonly Message[], index: number, state: ViewState): Message | undefined {
    if (index < state.cut) return undefined;
    const message = messages[index]!;
    if (message.role !== 'tool') return message;
    const kind = state.cleared.has(index) ? 'cleared' : state.offloaded.has(index) ? 'offloaded' : undefined;
    if (kind === undefined) return message;
    const known = this.rewritten[kind].get(index);
    if (known) return known;
    const content = kind === 'cleared' ? clearedText(message) : offloadedText(message, this.previewChars);
    const view: ToolResultMessage = { role: 'tool', callId: message.callId, name: message.name, content, isError: message.isError };
    this.rewritten[kind].set(index, view);
    return view;
  }

  summaryAt(state: ViewState): UserMessage | undefined {
    if (state.summary === undefined) return undefined;
    if (this.summaryView?.text !== state.summary) this.summaryView = { text: state.summary, message: summaryMessage(state.summary) };
    return this.summaryView.message;
  }

  /** The view of `messages[0, end)`. */
  build(messages: readonly Message[], end: number, state: ViewState): Message[] {
    const last = this.lastBuilt;
    if (last && last.state === state && last.end <= end) {
      for (let i = last.end; i < end; i++) last.messages.push(this.messageAt(messages, i, state)!);
      last.end = end;
      return last.messages;
    }
    const out: Message[] = [];
    const summary = this.summaryAt(state);
    if (summary) out.push(summary);
    for (let i = state.cut; i < end; i++) out.push(this.messageAt(messages, i, state)!);
    this.lastBuilt = { state, end, messages: out };
    return out;
  }

  estimate(message: Message): number {
    let tokens = this.tokens.get(message);
    if (tokens === undefined) {
      tokens = estimateMessage(message);
      this.tokens.set(message, tokens);
    }
    return tokens;
  }

  /** Estimated tokens of the view of `messages[0, end)` (without system prompt and tools). */
  estimateView(messages: readonly Message[], end: number, state: ViewState): number {
    const known = this.totals.get(state);
    let from = state.cut;
    let total: number;
    if (known && known.end <= end) {
      from = known.end;
      total = known.total;
    } else {
      const summary = this.summaryAt(state);
      total = summary ? this.estimate(summary) : 0;
    }
    for (let i = from; i < end; i++) total += this.estimate(this.messageAt(messages, i, state)!);
    this.totals.set(state, { end, total });
    return total;
  }

  /** Records an estimate computed elsewhere (a compaction step tracks its running total). */
  knowTotal(state: ViewState, end: number, total: number): void {
    this.totals.set(state, { end, total });
  }

  /** Forgets everything (the transcript was rewritten, e.g. by a handoff's input filter). */
  reset(): void {
    this.rewritten.offloaded.clear();
    this.rewritten.cleared.clear();
    this.summaryView = undefined;
    this.totals = new WeakMap();
    this.lastBuilt = undefined;
  }
}
