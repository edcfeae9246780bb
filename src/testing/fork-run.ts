import { UserError } from '../errors.js';
import type { CheckpointEntry, CheckpointHead, CheckpointStore, ForkOrigin } from '../store/records.js';
import { emptyUsage, type Message } from '../types.js';

/** A changed result for one call of the kept turns: its text, and whether it is an error (default false). */
export type ForkedResult = string | { readonly content: string; readonly isError?: boolean };

export interface ForkOptions {
  /** The turn the fork starts at: turns before it are kept as stored, and the model is asked again for this one. At least 1, at most one past the stored run's last turn. */
  readonly atTurn: number;
  /** The fork's run id. Default `<runId>~fork-<atTurn>`. It must not be stored yet. */
  readonly runId?: string;
  /** New results for calls of the kept turns, by call id (what if this tool had failed?). */
  readonly results?: Readonly<Record<string, ForkedResult>>;
  /** Decisions changed after the fact, by call id: `false` gives the call the result a denied approval gets; `true` is refused (the tool would have to run). */
  readonly decisions?: Readonly<Record<string, false>>;
  /** A user message the model sees first at `atTurn` (the "different next message"). */
  readonly message?: string;
}

export type { ForkOrigin } from '../store/records.js';

const turnOf = (entry: CheckpointEntry): number | undefined => ('turn' in entry && typeof entry.turn === 'number' ? entry.turn : undefined);

/**
 * Starts a new run from turn `atTurn` of the stored run `runId`, without running the turns
 * before it again: their entries are copied into a new run of the same store (with the
 * results and decisions you change, and your next message), whose first entry records its
 * origin (`forkedFrom: { runId, atTurn }`). The original run is not touched. Continue the fork
 * with `Runner.resume(agent, { store, runId })`: it asks the model for turn `atTurn` first.
 *
 * ```ts
 * const fork = await forkRun(store, 'refund-A1', { atTurn: 4, decisions: { r1: false } });
 * const result = await Runner.resume(desk, { store, runId: fork.runId }).result();
 * ```
 * Entries of the kept turns that belong to approvals or waits of a changed call are dropped,
 * so the fork's log says only what its results say. Its head's usage starts at zero.
 * @returns the fork's run id.
 * @throws UserError when the run is not stored, `atTurn` is out of range, the fork's id is
 *   taken, or a changed call id is not a call of the kept turns.
 */
export async function forkRun(store: CheckpointStore, runId: string, options: ForkOptions): Promise<{ readonly runId: string }> {
  const stored = await store.load(runId);
  if (!stored) throw new UserError(`forkRun: no stored run '${runId}'.`);
  const lastTurn = Math.max(0, ...stored.entries.map((e) => turnOf(e) ?? 0));
  const { atTurn } = options;
  if (!Number.isInteger(atTurn) || atTurn < 1 || atTurn > lastTurn + 1) throw new UserError(`forkRun: atTurn must be an integer from 1 to ${lastTurn + 1} (run '${runId}' has ${lastTurn} turn${lastTurn === 1 ? '' : 's'}), got ${String(atTurn)}.`);
  const forkId = options.runId ?? `${runId}~fork-${atTurn}`;
  if (await store.load(forkId)) throw new UserError(`forkRun: run '${forkId}' is stored already; give the fork another runId.`);
  // Turns before atTurn, and the run's inputs before them (approval and wait entries carry no turn of their own: they go with their call).
  const keptCalls = new Set<string>();
  const kept: CheckpointEntry[] = [];
  let turn = 0;
  for (const entry of stored.entries) {
    turn = turnOf(entry) ?? turn;
    if (turn >= atTurn) break;
    kept.push(entry);
    if (entry.kind === 'reply' && entry.message.role === 'assistant') for (const c of entry.message.toolCalls) keptCalls.add(c.id);
  }
  const changes = new Map<string, { content: string; isError: boolean }>();
  for (const [callId, result] of Object.entries(options.results ?? {})) changes.set(callId, typeof result === 'string' ? { content: result, isError: false } : { content: result.content, isError: result.isError ?? false });
  for (const [callId, decision] of Object.entries(options.decisions ?? {})) {
    if (decision !== false) throw new UserError(`forkRun: decisions can only deny a call after the fact (call '${callId}'); to approve it, fork at its turn and decide it there.`);
    const name = kept.find((e): e is Extract<CheckpointEntry, { kind: 'result' }> => e.kind === 'result' && e.message.role === 'tool' && e.message.callId === callId)?.message;
    changes.set(callId, { content: `Tool error: approval denied for tool '${name && name.role === 'tool' ? name.name : callId}'`, isError: true });
  }
  for (const callId of changes.keys()) if (!keptCalls.has(callId)) throw new UserError(`forkRun: '${callId}' is not a call of turns 1 to ${atTurn - 1} of run '${runId}' (its calls: ${[...keptCalls].join(', ') || 'none'}).`);
  const entries: CheckpointEntry[] = [];
  for (const entry of kept) {
    const callId = 'callId' in entry ? entry.callId : entry.kind === 'result' && entry.message.role === 'tool' ? entry.message.callId : undefined;
    if (callId !== undefined && changes.has(callId) && entry.kind !== 'result') continue;
    if (entry.kind === 'result' && entry.message.role === 'tool' && changes.has(entry.message.callId)) {
      const { parts: _parts, ...message } = entry.message;
      entries.push({ ...entry, message: { ...message, ...changes.get(entry.message.callId)! } as Message });
    } else entries.push(entry);
  }
  if (options.message !== undefined) entries.push({ kind: 'input', message: { role: 'user', content: options.message }, source: 'steer' });
  const origin: ForkOrigin = { runId, atTurn };
  const first = entries[0];
  if (first?.kind !== 'input') throw new UserError(`forkRun: run '${runId}' does not start with its input; it cannot be forked.`);
  entries[0] = { ...first, forkedFrom: origin };
  const agent = [...entries].reverse().find((e) => e.kind === 'handoff')?.to ?? firstAgent(stored.entries) ?? stored.head.agent;
  const head: CheckpointHead = { agent, turn: atTurn - 1, usage: emptyUsage(), status: 'suspended' };
  await store.append(forkId, entries, head);
  return { runId: forkId };
}

/** The agent that made the run's first reply (the run's first agent), if it made one. */
function firstAgent(entries: readonly CheckpointEntry[]): string | undefined {
  for (const e of entries) if (e.kind === 'reply' && e.message.role === 'assistant') return e.message.agent;
  return undefined;
}

/** Where a stored run was forked from (its first entry's `forkedFrom`), or undefined for a run that is not a fork. */
export function forkOrigin(entries: readonly CheckpointEntry[]): ForkOrigin | undefined {
  const first = entries[0];
  return first?.kind === 'input' ? first.forkedFrom : undefined;
}
