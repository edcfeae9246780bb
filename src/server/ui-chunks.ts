import type { WireRunEvent } from '../inspect/wire.js';
import type { RunEventType } from '../types.js';
import { CallSlots, type CallSlot, type WireCall } from './ui-calls.js';
import type { OpenedApproval, TroupeCustomMessageData, TroupeDiscardedData, TroupeMessageMetadata, TroupeToolMetadata, UIChunkOptions, UIMessageChunk } from './ui-chunk-types.js';

export type { OpenedApproval, TroupeCustomMessageData, TroupeDiscardedData, TroupeMessageMetadata, TroupeToolMetadata, UIChunkOptions, UIMessageChunk } from './ui-chunk-types.js';

/** Where a call was made, for its tool part. */
interface CallSite {
  readonly runId: string;
  readonly callId: string;
  readonly toolName: string;
  readonly turn: number;
  readonly agent: string;
  readonly path: string[];
  readonly requested?: { readonly toolName: string; readonly arguments: string };
}

/** Text a run's denial results start with (`rejectDenied` in runtime/run-calls.ts). */
const DENIED = 'Tool error: approval denied for tool ';

/**
 * Turns one run tree's events (JSON form, as `serializeRunEvent` and the server's chat stream
 * give them, in stream order) into UI message stream chunks for one assistant message.
 * Stateful: one mapper per stream. Never throws on unexpected input; it maps what it can.
 *
 * - `toolCallId` is `<runId>:<turn>.<index>` (index = position in the model's reply), unique
 *   across the run tree and equal to the troupe `approvalId` of a gated call (how the index
 *   is derived: `CallSlots`).
 * - Text and reasoning are the root run's (handoff targets included); sub-runs contribute
 *   tool parts and `data-troupe-event` parts, not text.
 */
export class UIMessageChunkMapper {
  private readonly slots = new CallSlots();
  private readonly dataEvents: UIChunkOptions['dataEvents'];
  private started = false;
  private stepOpen = false;
  private text: { id: string; turn: number } | undefined;
  private reasoning: { id: string; turn: number } | undefined;
  /** Turns of the root run whose text / reasoning was streamed (for replies that arrive whole). */
  private readonly streamedText = new Set<number>();
  private readonly streamedReasoning = new Set<number>();
  private partCount = 0;
  /** Text and reasoning parts of the root's current model attempt (voided by `output_discarded`). */
  private attemptParts: string[] = [];
  private ended = false;

  constructor(
    readonly rootRunId: string,
    options: UIChunkOptions = {},
  ) {
    this.dataEvents = options.dataEvents ?? 'all';
  }

  /** Whether the message is complete (`finish`, `error` + `finish`, or `abort` was emitted). */
  get finished(): boolean {
    return this.ended;
  }

  /** The chunks for one event; nothing once finished. */
  map(event: WireRunEvent): UIMessageChunk[] {
    if (this.ended) return [];
    const out: UIMessageChunk[] = [];
    this.ensureStarted(out, event.runId === this.rootRunId && event.type === 'run_started' ? event.agent : undefined);
    const root = event.runId === this.rootRunId;
    const turn = num(event.turn);
    switch (event.type) {
      case 'run_started':
        if (!root) this.data(out, event);
        break;
      case 'turn_started':
        if (root) {
          this.attemptParts = [];
          this.closeStep(out);
          out.push({ type: 'start-step' });
          this.stepOpen = true;
        }
        this.data(out, event);
        break;
      case 'text_delta':
      case 'reasoning_delta':
        if (root) this.delta(out, event.type === 'text_delta' ? 'text' : 'reasoning', turn, str(event.delta));
        break;
      case 'message_completed': {
        const calls = (event.message as { toolCalls?: unknown } | undefined)?.toolCalls;
        if (Array.isArray(calls)) this.slots.recordReply(event.runId, turn, calls as WireCall[]);
        if (root) this.completeReply(out, event, turn);
        else this.data(out, event);
        break;
      }
      case 'approval_required': {
        const call = callOf(event);
        if (!call) break;
        const approvalId = str(event.approvalId);
        const slot = approvalId ? this.slots.byApproval(approvalId, event.runId, turn, call) : this.slots.find(event.runId, turn, call, 'start');
        this.requestApproval(out, slot, callSite(event, call), event.args, approvalId || slot.toolCallId);
        break;
      }
      case 'tool_call_started': {
        const call = callOf(event);
        if (!call) break;
        const slot = this.slots.find(event.runId, turn, call, 'start');
        slot.started = true;
        this.sendInput(out, slot, callSite(event, call), parseArgs(call.arguments));
        break;
      }
      case 'tool_call_completed': {
        const call = callOf(event);
        if (!call) break;
        const slot = this.slots.find(event.runId, turn, call, 'complete');
        slot.done = true;
        this.sendInput(out, slot, callSite(event, call), parseArgs(call.arguments));
        const output = str(event.output);
        if (event.isError !== true) out.push({ type: 'tool-output-available', toolCallId: slot.toolCallId, output: event.result !== undefined ? event.result : output });
        else if (slot.approvalRequested && output.startsWith(DENIED)) out.push({ type: 'tool-output-denied', toolCallId: slot.toolCallId });
        else out.push({ type: 'tool-output-error', toolCallId: slot.toolCallId, errorText: output });
        break;
      }
      case 'tool_call_progress': {
        const call = callOf(event);
        this.data(out, event, call ? `${this.slots.find(event.runId, turn, call, 'peek').toolCallId}:progress` : undefined);
        break;
      }
      case 'user_message_injected': {
        // A custom-role message (steered by the caller) is a part of its own: UIs show notes and UI events as they like.
        const message = (event.message ?? {}) as { role?: unknown; content?: unknown; data?: unknown };
        if (root && typeof message.role === 'string' && !['user', 'assistant', 'tool', 'system'].includes(message.role)) {
          out.push({ type: 'data-troupe-message', data: { runId: event.runId, turn, role: message.role, content: str(message.content), ...(message.data !== undefined ? { data: message.data } : {}) } });
        }
        this.data(out, event);
        break;
      }
      case 'output_discarded':
        if (root) this.discard(out, event, turn);
        this.data(out, event);
        break;
      case 'turn_ended':
        if (root) {
          this.closeParts(out);
          this.data(out, event);
          this.closeStep(out);
        } else this.data(out, event);
        break;
      case 'run_completed':
      case 'run_failed':
        if (root) this.finish(out, event);
        else this.data(out, event);
        break;
      default:
        this.data(out, event);
    }
    return out;
  }

  /**
   * A call started waiting for a decision (`handle.approvals.onOpened`, `pendingApprovals`):
   * its tool part and approval request, possibly before the stream reaches its events (a run
   * held at one approval still shows the others). The later `approval_required` adds nothing.
   */
  approvalOpened(approval: OpenedApproval): UIMessageChunk[] {
    if (this.ended) return [];
    const out: UIMessageChunk[] = [];
    this.ensureStarted(out, undefined);
    const slot = this.slots.byApproval(approval.approvalId, approval.runId, approval.turn, { id: approval.callId, name: approval.tool, arguments: '' });
    const site: CallSite = { runId: approval.runId, callId: approval.callId, toolName: approval.tool, turn: approval.turn, agent: approval.agent, path: [...approval.path] };
    this.requestApproval(out, slot, site, approval.args, approval.approvalId);
    return out;
  }

  /** Closes the message when the events ended without the root's terminal event: an `error`, then `finish`. */
  end(errorText = 'The run stream ended without a terminal event.'): UIMessageChunk[] {
    if (this.ended) return [];
    const out: UIMessageChunk[] = [];
    this.ensureStarted(out, undefined);
    this.closeParts(out);
    this.closeStep(out);
    out.push({ type: 'error', errorText }, { type: 'finish', finishReason: 'error', messageMetadata: { runId: this.rootRunId, status: 'failed' } });
    this.ended = true;
    return out;
  }

  private ensureStarted(out: UIMessageChunk[], agent: string | undefined): void {
    if (this.started) return;
    this.started = true;
    out.push({ type: 'start', messageId: this.rootRunId, messageMetadata: { runId: this.rootRunId, ...(agent !== undefined ? { agent } : {}) } });
  }

  private data(out: UIMessageChunk[], event: WireRunEvent, id?: string): void {
    const filter = this.dataEvents;
    if (filter === 'none' || (filter !== 'all' && !filter!.includes(event.type as RunEventType))) return;
    out.push(id === undefined ? { type: 'data-troupe-event', data: event } : { type: 'data-troupe-event', id, data: event });
  }

  private delta(out: UIMessageChunk[], kind: 'text' | 'reasoning', turn: number, delta: string): void {
    if (delta === '') return;
    (kind === 'text' ? this.streamedText : this.streamedReasoning).add(turn);
    const open = kind === 'text' ? this.text : this.reasoning;
    let id = open && open.turn === turn ? open.id : undefined;
    if (id === undefined) {
      // One part per block: text closes open reasoning and the other way round.
      this.closeParts(out);
      id = `${kind}-${turn}-${++this.partCount}`;
      this.attemptParts.push(id);
      out.push({ type: kind === 'text' ? 'text-start' : 'reasoning-start', id });
      if (kind === 'text') this.text = { id, turn };
      else this.reasoning = { id, turn };
    }
    out.push(kind === 'text' ? { type: 'text-delta', id, delta } : { type: 'reasoning-delta', id, delta });
  }

  /** The root's attempt is void: its parts are closed and listed for the client to drop. */
  private discard(out: UIMessageChunk[], event: WireRunEvent, turn: number): void {
    this.closeParts(out);
    this.streamedText.delete(turn);
    this.streamedReasoning.delete(turn);
    const data: TroupeDiscardedData = { runId: event.runId, turn, reason: str(event.reason), partIds: this.attemptParts };
    if (typeof event.attempt === 'number') data.attempt = event.attempt;
    this.attemptParts = [];
    out.push({ type: 'data-troupe-discarded', data });
  }

  /** The root's reply is complete: close its parts; a reply that was not streamed is sent whole. */
  private completeReply(out: UIMessageChunk[], event: WireRunEvent, turn: number): void {
    const message = (event.message ?? {}) as { content?: unknown; reasoning?: unknown };
    if (!this.streamedReasoning.has(turn)) this.delta(out, 'reasoning', turn, str(message.reasoning));
    if (!this.streamedText.has(turn)) this.delta(out, 'text', turn, str(message.content));
    this.closeParts(out);
  }

  private closeParts(out: UIMessageChunk[]): void {
    if (this.reasoning) out.push({ type: 'reasoning-end', id: this.reasoning.id });
    if (this.text) out.push({ type: 'text-end', id: this.text.id });
    this.reasoning = undefined;
    this.text = undefined;
  }

  private closeStep(out: UIMessageChunk[]): void {
    if (!this.stepOpen) return;
    this.closeParts(out);
    out.push({ type: 'finish-step' });
    this.stepOpen = false;
  }

  private finish(out: UIMessageChunk[], event: WireRunEvent): void {
    this.closeParts(out);
    this.closeStep(out);
    const usage = event.usage as TroupeMessageMetadata['usage'];
    const turns = typeof event.turns === 'number' ? event.turns : undefined;
    const base: TroupeMessageMetadata = { runId: this.rootRunId, ...(usage ? { usage } : {}), ...(turns !== undefined ? { turns } : {}) };
    if (event.type === 'run_completed') {
      out.push({ type: 'finish', finishReason: 'stop', messageMetadata: { ...base, status: 'completed' } });
    } else {
      const raw = (event.error ?? {}) as { name?: unknown; code?: unknown; message?: unknown };
      const error = { name: str(raw.name) || 'Error', code: typeof raw.code === 'string' ? raw.code : null, message: str(raw.message) || 'run failed' };
      if (error.code === 'RUN_CANCELLED') out.push({ type: 'abort', reason: error.message });
      else out.push({ type: 'error', errorText: error.message }, { type: 'finish', finishReason: 'error', messageMetadata: { ...base, status: 'failed', error } });
    }
    this.ended = true;
  }

  /** Sends `tool-input-available` once per call, before anything else about it. */
  private sendInput(out: UIMessageChunk[], slot: CallSlot, site: CallSite, input: unknown): void {
    if (slot.inputSent) return;
    slot.inputSent = true;
    const metadata: TroupeToolMetadata = { runId: site.runId, callId: site.callId, turn: site.turn, agent: site.agent, path: site.path };
    const parent = parentToolCallId(site.runId);
    if (parent !== undefined && site.runId !== this.rootRunId) metadata.parentToolCallId = parent;
    if (site.requested) metadata.requested = { ...site.requested };
    out.push({ type: 'tool-input-available', toolCallId: slot.toolCallId, toolName: site.toolName, input: input === undefined ? {} : input, toolMetadata: metadata });
  }

  /** The call's input (if not sent yet), then its approval request, once. */
  private requestApproval(out: UIMessageChunk[], slot: CallSlot, site: CallSite, args: unknown, approvalId: string): void {
    this.sendInput(out, slot, site, args);
    if (slot.approvalRequested) return;
    slot.approvalRequested = true;
    out.push({ type: 'tool-approval-request', approvalId, toolCallId: slot.toolCallId });
  }
}

/**
 * The tool part of the parent call that started sub-run `runId` (`<parent>/<turn>.<index>` →
 * `<parent>:<turn>.<index>`); undefined for an id without that shape.
 */
export function parentToolCallId(runId: string): string | undefined {
  const cut = runId.lastIndexOf('/');
  if (cut <= 0 || !/^\d+\.\d+$/.test(runId.slice(cut + 1))) return undefined;
  return `${runId.slice(0, cut)}:${runId.slice(cut + 1)}`;
}

function callOf(event: WireRunEvent): WireCall | undefined {
  const call = event.call as WireCall | undefined;
  return call && typeof call.id === 'string' ? call : undefined;
}

function callSite(event: WireRunEvent, call: WireCall): CallSite {
  const site = { runId: event.runId, callId: String(call.id), toolName: String(call.name), turn: num(event.turn), agent: event.agent, path: [...(event.path ?? [])] };
  const requested = event.requested as WireCall | undefined;
  return requested && typeof requested.name === 'string' ? { ...site, requested: { toolName: requested.name, arguments: String(requested.arguments ?? '') } } : site;
}

function parseArgs(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}
