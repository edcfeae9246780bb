/** One tool call of the run tree, as the UI stream knows it. */
export interface CallSlot {
  /** The tool part's id: `<runId>:<turn>.<index>` (or a fallback, see `CallSlots`). */
  readonly toolCallId: string;
  /** The model's call id. */
  readonly callId: string;
  /** The raw JSON arguments ('' when only the parsed ones are known). */
  args: string;
  inputSent: boolean;
  started: boolean;
  done: boolean;
  approvalRequested: boolean;
}

/** A tool call as events carry it (`ToolCallRequest` in JSON). */
export interface WireCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: string;
}

/** What an event about a call needs: the first slot not yet started, not yet completed, or any. */
export type SlotPhase = 'start' | 'complete' | 'peek';

/**
 * Gives each tool call of a run tree a stable id unique across the tree, `<runId>:<turn>.<index>`,
 * where index is the call's position in the model's reply, the same key the runtime uses
 * (`approvalId` = `<runId>:<turn>.<index>`). Tool events carry no index, so it is derived:
 *
 * 1. an approval id names its slot exactly;
 * 2. else the reply (`message_completed`) of that run and turn lists the calls: the event's
 *    call id (and raw arguments, to tell repeated ids apart) picks the slot, the first one not
 *    yet started (`tool_call_started`) or not yet completed (`tool_call_completed`, started
 *    ones first: rejected calls complete without starting);
 * 3. else (no reply seen, e.g. a stream that began mid-turn) `<runId>:<turn>:<callId>`, with
 *    `#2`, `#3`, … for repeats.
 *
 * Limitation: two calls of one reply with the same id *and* the same arguments that complete
 * out of order may swap outputs (they are indistinguishable in the events).
 */
export class CallSlots {
  private readonly byTurn = new Map<string, CallSlot[]>();
  private readonly byId = new Map<string, CallSlot>();

  /** Notes a reply's calls: index i of `calls` is `<runId>:<turn>.<i>`. Slots announced earlier are kept. */
  recordReply(runId: string, turn: number, calls: readonly WireCall[]): void {
    if (calls.length === 0) return;
    const list = calls.map((call, index) => {
      const id = `${runId}:${turn}.${index}`;
      const known = this.byId.get(id);
      if (known) {
        known.args = String(call.arguments);
        return known;
      }
      return this.create(id, call);
    });
    this.byTurn.set(turnKey(runId, turn), list);
  }

  /** The slot named by an approval id, created (in that run and turn) when new. */
  byApproval(approvalId: string, runId: string, turn: number, call: WireCall): CallSlot {
    const known = this.byId.get(approvalId);
    if (known) return known;
    const slot = this.create(approvalId, call);
    this.listOf(runId, turn).push(slot);
    return slot;
  }

  /** The slot an event about `call` in that run and turn is about (rules 2 and 3 above). */
  find(runId: string, turn: number, call: WireCall, phase: SlotPhase): CallSlot {
    const list = this.listOf(runId, turn);
    const all = list.filter((slot) => slot.callId === call.id);
    const same = all.filter((slot) => slot.args === call.arguments);
    const candidates = same.length > 0 ? same : all;
    const free = (slot: CallSlot): boolean => (phase === 'start' ? !slot.started && !slot.done : phase === 'complete' ? !slot.done : true);
    const found = candidates.find((slot) => free(slot) && (phase !== 'complete' || slot.started)) ?? candidates.find(free);
    if (found) return found;
    if (phase === 'peek' && candidates.length > 0) return candidates[candidates.length - 1]!;
    const base = `${runId}:${turn}:${call.id}`;
    const slot = this.create(all.length === 0 ? base : `${base}#${all.length + 1}`, call);
    list.push(slot);
    return slot;
  }

  private listOf(runId: string, turn: number): CallSlot[] {
    const key = turnKey(runId, turn);
    let list = this.byTurn.get(key);
    if (!list) this.byTurn.set(key, (list = []));
    return list;
  }

  private create(toolCallId: string, call: WireCall): CallSlot {
    const slot: CallSlot = {
      toolCallId,
      callId: String(call.id),
      args: typeof call.arguments === 'string' ? call.arguments : '',
      inputSent: false,
      started: false,
      done: false,
      approvalRequested: false,
    };
    this.byId.set(toolCallId, slot);
    return slot;
  }
}

function turnKey(runId: string, turn: number): string {
  return `${runId}\u0000${turn}`;
}
