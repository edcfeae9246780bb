import { toJsonSafe } from '../inspect/sanitize.js';
import type { PendingApproval } from '../runtime/approvals.js';
import type { RunHandle } from '../runtime/runner.js';
import type { RunEvent } from '../types.js';
import { serializeRunEvent } from './serialize.js';
import { UIMessageChunkMapper, type OpenedApproval, type UIChunkOptions, type UIMessageChunk } from './ui-chunks.js';

export { UIMessageChunkMapper, parentToolCallId, type OpenedApproval, type UIChunkOptions, type UIMessageChunk, type TroupeMessageMetadata, type TroupeToolMetadata } from './ui-chunks.js';

/** Response headers of a UI message stream over SSE (as the `ai` package's `UI_MESSAGE_STREAM_HEADERS`). */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
};

/** The SSE frame of one chunk: `data: <json>\n\n`. */
export function uiChunkFrame(chunk: UIMessageChunk): string {
  return `data: ${JSON.stringify(chunk)}\n\n`;
}

/** The frame that ends a UI message stream. */
export const UI_STREAM_DONE_FRAME = 'data: [DONE]\n\n';

export interface ToUIMessageStreamOptions extends UIChunkOptions {
  /**
   * What the stream does at an `approval_required` it has sent as a `tool-approval-request`:
   *
   * - `'hold'` (default): it reads no further until the call is decided (by
   *   `handle.approvals.approve/reject(approvalId)`, a timeout or a cancel), so the decision
   *   stays with your UI. Events queue in the handle meanwhile; other calls that wait (or
   *   start waiting) during the hold are announced at once, so the UI sees every open request.
   * - `'pass'`: it reads on, so the call falls to the agent's `approvalHandler` (and is denied
   *   when there is none), as for any loop that moves past the event.
   */
  readonly approvals?: 'hold' | 'pass';
}

/**
 * The run's events as an AI SDK 6 UI message stream (one assistant message, id = run id),
 * for `createUIMessageStreamResponse({ stream })`, `readUIMessageStream({ stream })` or any
 * SSE writer (`uiChunkFrame`, then `UI_STREAM_DONE_FRAME`). See the README "AI SDK UI
 * streams" for the mapping.
 *
 * It is one more loop over the handle (every loop sees every event from the first one), read
 * as fast as the consumer pulls. Cancelling the stream breaks that loop, with a loop's usual
 * consequences: an approval it was holding counts as passed (it falls to the agent's
 * approvalHandler, else is denied), and when it was the handle's only loop the run goes on
 * unobserved (`stopListening`). It does not cancel the run: call `handle.cancel()` for that.
 * Never errors: a failed run ends with `error` + `finish` (cancelled: `abort`).
 */
export function toUIMessageStream(handle: RunHandle, options: ToUIMessageStreamOptions = {}): ReadableStream<UIMessageChunk> {
  const mapper = new UIMessageChunkMapper(handle.runId, options);
  const hold = (options.approvals ?? 'hold') === 'hold';
  let iterator: AsyncIterator<RunEvent> | undefined;
  let heldApproval: string | undefined;
  let cancelled = false;
  let stopWaiting: (() => void) | undefined;

  /** Waits until the held call is decided (or the stream is cancelled), announcing the other waiting calls meanwhile. */
  const waitForDecision = async (approvalId: string, controller: ReadableStreamDefaultController<UIMessageChunk>): Promise<void> => {
    const announce = (approval: PendingApproval): void => {
      if (cancelled) return;
      for (const chunk of mapper.approvalOpened(toJsonSafe(approval) as OpenedApproval)) controller.enqueue(chunk);
    };
    const cancel = new Promise<void>((resolve) => (stopWaiting = resolve));
    const settled = handle.approvals.settled(approvalId).catch(() => undefined);
    for (const approval of handle.approvals.pending()) announce(approval);
    const stopAnnouncing = handle.approvals.onOpened(announce);
    await Promise.race([settled, cancel]);
    stopAnnouncing();
    stopWaiting = undefined;
  };

  return new ReadableStream<UIMessageChunk>({
    async pull(controller) {
      iterator ??= handle[Symbol.asyncIterator]();
      for (;;) {
        if (heldApproval !== undefined) {
          const approvalId = heldApproval;
          heldApproval = undefined;
          await waitForDecision(approvalId, controller);
        }
        if (cancelled) return;
        const next = await iterator.next();
        if (cancelled) return;
        if (next.done) {
          for (const chunk of mapper.end()) controller.enqueue(chunk);
          controller.close();
          return;
        }
        const event = next.value;
        const chunks = mapper.map(serializeRunEvent(event));
        for (const chunk of chunks) controller.enqueue(chunk);
        if (hold && event.type === 'approval_required') heldApproval = event.approvalId;
        if (chunks.length > 0) return;
      }
    },
    async cancel() {
      cancelled = true;
      stopWaiting?.();
      await iterator?.return?.();
    },
  });
}
