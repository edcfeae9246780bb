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
}

export const EMPTY_VIEW: ViewState = { offloaded: new Set(), cleared: new Set(), cut: 0, summary: undefined };

export const SUMMARY_HEADER = '[Summary of the earlier conversation]';

export function summaryMessage(summary: string): UserMessage {
  return { role: 'user', content: `${SUMMARY_HEADER}\n${summary}` };
}

export function offloadedText(result: ToolResultMessage, previewChars: number): string {
  const preview = [...result.content].slice(0, previewChars).join('');
  return (
    `[Result of ${result.name} offloaded to save context: ${result.content.length} chars. Its first ${[...preview].length} chars:]\n` +
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
  private readonly rewritten = new Map<number, { readonly kind: 'offloaded' | 'cleared'; readonly message: ToolResultMessage }>();
  private readonly tokens = new WeakMap<object, number>();
  private summaryView: { readonly text: string; readonly message: UserMessage } | undefined;

  constructor(private readonly previewChars: number) {}

  /** Message `index` of `messages` as `state` shows it (undefined for a summarised one). */
  messageAt(messages: readonly Message[], index: number, state: ViewState): Message | undefined {
    if (index < state.cut) return undefined;
    const message = messages[index]!;
    if (message.role !== 'tool') return message;
    const kind = state.cleared.has(index) ? 'cleared' : state.offloaded.has(index) ? 'offloaded' : undefined;
    if (kind === undefined) return message;
    const known = this.rewritten.get(index);
    if (known && known.kind === kind) return known.message;
    const content = kind === 'cleared' ? clearedText(message) : offloadedText(message, this.previewChars);
    const view: ToolResultMessage = { role: 'tool', callId: message.callId, name: message.name, content, isError: message.isError };
    this.rewritten.set(index, { kind, message: view });
    return view;
  }

  summaryAt(state: ViewState): UserMessage | undefined {
    if (state.summary === undefined) return undefined;
    if (this.summaryView?.text !== state.summary) this.summaryView = { text: state.summary, message: summaryMessage(state.summary) };
    return this.summaryView.message;
  }

  /** The view of `messages[0, end)`. */
  build(messages: readonly Message[], end: number, state: ViewState): Message[] {
    const out: Message[] = [];
    const summary = this.summaryAt(state);
    if (summary) out.push(summary);
    for (let i = state.cut; i < end; i++) out.push(this.messageAt(messages, i, state)!);
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
    const summary = this.summaryAt(state);
    let total = summary ? this.estimate(summary) : 0;
    for (let i = state.cut; i < end; i++) total += this.estimate(this.messageAt(messages, i, state)!);
    return total;
  }

  /** Forgets everything (the transcript was rewritten, e.g. by a handoff's input filter). */
  reset(): void {
    this.rewritten.clear();
    this.summaryView = undefined;
  }
}
