/**
 * Folds a run tree's events (as they cross the wire) into a transcript: what each run was
 * asked, what the model said and reasoned, every tool call with its arguments, result and
 * attempts, handoffs and injected messages, with sub-runs nested under the call that started
 * them. Dependency-free: the inspector page imports it.
 */
import type { WireError, WireRunEvent } from './wire.js';

export interface ToolCallItem {
  readonly kind: 'tool';
  readonly runId: string;
  readonly callId: string;
  readonly tool: string;
  readonly turn: number;
  readonly agent: string;
  /** The arguments as the model wrote them (raw JSON text). */
  readonly rawArgs: string;
  /** Parsed, validated arguments (from the approval request), when known. */
  args: unknown;
  status: 'requested' | 'waiting_approval' | 'running' | 'done' | 'error' | 'rejected';
  /** The string the model saw. */
  output: string | undefined;
  /** The raw value the tool returned. */
  result: unknown;
  details: unknown;
  isError: boolean;
  terminate: boolean;
  blockedBy: string | undefined;
  readonly progress: unknown[];
  readonly failures: Array<{ readonly attempt: number; readonly error: WireError; readonly willRetry: boolean }>;
  approvalId: string | undefined;
  /** The sub-run this call started (agent as a tool). */
  subRun: RunTranscript | undefined;
  /** The tool that ran and its arguments, when a resolveToolCall hook resolved the model's call (`tool`, `rawArgs`: as the model asked). */
  ran?: { readonly name: string; readonly arguments: string };
}

export type TranscriptItem =
  | { readonly kind: 'user'; readonly text: string; readonly source: 'input' | 'steer' | 'follow_up' | 'mailbox' | 'hook' | 'repair' | 'system' }
  | { readonly kind: 'assistant'; readonly agent: string; readonly turn: number; text: string; reasoning: string; streaming: boolean; discarded: string | undefined; /** The run's running total after this reply (sub-runs' spend included), as the event carries it. */ runTotal: WireUsage | undefined }
  | ToolCallItem
  | { readonly kind: 'handoff'; readonly from: string; readonly to: string; readonly turn: number }
  | { readonly kind: 'human'; readonly callId: string; readonly question: string; answer: unknown }
  | { readonly kind: 'end'; readonly status: 'completed' | 'failed' | 'cancelled'; readonly output: string | undefined; readonly error: WireError | undefined; readonly agent: string; readonly turns: number | undefined };

export interface WireUsage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly requests: number;
}

export interface RunTranscript {
  readonly runId: string;
  readonly path: readonly string[];
  /** The agent the run started with; `agent` of later items may differ after a handoff. */
  readonly agent: string;
  readonly items: TranscriptItem[];
  status: 'running' | 'completed' | 'failed' | 'cancelled';
}

/** The root transcript plus every run of the tree by id. */
export interface TranscriptTree {
  readonly root: RunTranscript | undefined;
  readonly runs: Map<string, RunTranscript>;
  readonly calls: Map<string, ToolCallItem>;
}

export function emptyTree(): TranscriptTree {
  return { root: undefined, runs: new Map(), calls: new Map() };
}

const callKey = (runId: string, callId: string): string => `${runId}|${callId}`;

/**
 * Applies one event to the tree (mutates it). Events of a run that started earlier than the
 * retained history are still placed: the run is created on first sight.
 */
export function foldEvent(tree: TranscriptTree, event: WireRunEvent): void {
  const run = runOf(tree, event);
  const turn = typeof event.turn === 'number' ? event.turn : 0;
  switch (event.type) {
    case 'run_started': {
      const input = event.input;
      if (typeof input === 'string') run.items.push({ kind: 'user', text: input, source: 'input' });
      else if (Array.isArray(input)) {
        for (const message of input as Array<{ role?: string; content?: unknown }>) {
          const text = typeof message.content === 'string' ? message.content : JSON.stringify(message.content);
          run.items.push({ kind: 'user', text: `${message.role === 'user' || !message.role ? '' : `[${message.role}] `}${text}`, source: message.role === 'system' ? 'system' : 'input' });
        }
      }
      return;
    }
    case 'user_message_injected': {
      const message = event.message as { role?: unknown; content?: unknown } | undefined;
      // A custom-role message (a note, a UI event) is shown with its role, as in the run's input.
      const role = typeof message?.role === 'string' && message.role !== 'user' ? `[${message.role}] ` : '';
      run.items.push({ kind: 'user', text: `${role}${String(message?.content ?? '')}`, source: (event.source as 'steer') ?? 'steer' });
      return;
    }
    case 'text_delta':
    case 'reasoning_delta': {
      const item = streamingItem(run, event.agent, turn);
      if (event.type === 'text_delta') item.text += String(event.delta ?? '');
      else item.reasoning += String(event.delta ?? '');
      return;
    }
    case 'output_discarded': {
      const item = lastAssistant(run, turn);
      if (item && item.streaming) {
        item.streaming = false;
        item.discarded = String(event.reason ?? 'discarded');
      }
      return;
    }
    case 'message_completed': {
      const message = event.message as { content?: string; reasoning?: string; toolCalls?: Array<{ id: string; name: string; arguments: string }> };
      const open = lastAssistant(run, turn);
      const item = open && open.streaming ? open : streamingItem(run, event.agent, turn, true);
      item.text = message.content ?? item.text;
      item.reasoning = message.reasoning ?? item.reasoning;
      item.streaming = false;
      item.runTotal = event.usage as WireUsage | undefined;
      // A long list may arrive truncated (its last element then says how many were left out): skip what is not a call.
      for (const call of message.toolCalls ?? []) if (typeof call?.id === 'string' && typeof call.name === 'string') callItem(tree, run, event.runId, call.id, call.name, turn, event.agent, String(call.arguments ?? ''));
      return;
    }
    case 'approval_required': {
      const call = toolCall(tree, run, event, turn);
      call.status = 'waiting_approval';
      call.args = event.args;
      call.approvalId = typeof event.approvalId === 'string' ? event.approvalId : undefined;
      return;
    }
    case 'tool_call_started':
      toolCall(tree, run, event, turn).status = 'running';
      return;
    case 'tool_call_progress':
      toolCall(tree, run, event, turn).progress.push(event.progress);
      return;
    case 'tool_call_failed':
      toolCall(tree, run, event, turn).failures.push({ attempt: Number(event.attempt ?? 0), error: event.error as WireError, willRetry: event.willRetry === true });
      return;
    case 'tool_call_completed': {
      const call = toolCall(tree, run, event, turn);
      call.status = call.status === 'requested' || call.status === 'waiting_approval' ? 'rejected' : event.isError ? 'error' : 'done';
      call.output = typeof event.output === 'string' ? event.output : undefined;
      call.result = event.result;
      call.details = event.details;
      call.isError = event.isError === true;
      call.terminate = event.terminate === true;
      call.blockedBy = typeof event.blockedBy === 'string' ? event.blockedBy : undefined;
      return;
    }
    case 'human_request':
      run.items.push({ kind: 'human', callId: String((event.call as { id?: string })?.id ?? ''), question: String(event.question ?? ''), answer: undefined });
      return;
    case 'human_answer': {
      const id = String((event.call as { id?: string })?.id ?? '');
      const item = [...run.items].reverse().find((i) => i.kind === 'human' && i.callId === id);
      if (item && item.kind === 'human') item.answer = event.answer;
      return;
    }
    case 'handoff_occurred':
      run.items.push({ kind: 'handoff', from: String(event.from), to: String(event.to), turn });
      return;
    case 'run_completed':
      run.status = 'completed';
      run.items.push({ kind: 'end', status: 'completed', output: String(event.output ?? ''), error: undefined, agent: event.agent, turns: event.turns as number | undefined });
      return;
    case 'run_failed': {
      const error = event.error as WireError;
      run.status = error?.code === 'RUN_CANCELLED' ? 'cancelled' : 'failed';
      run.items.push({ kind: 'end', status: run.status, output: undefined, error, agent: event.agent, turns: event.turns as number | undefined });
      return;
    }
    default:
      return;
  }
}

/** Folds a whole event list. */
export function buildTranscript(events: readonly WireRunEvent[]): TranscriptTree {
  const tree = emptyTree();
  for (const event of events) foldEvent(tree, event);
  return tree;
}

/** Every transcript item of a run and its sub-runs, depth first (sub-run items after their call). */
export function countItems(run: RunTranscript): number {
  let n = 0;
  for (const item of run.items) {
    n++;
    if (item.kind === 'tool' && item.subRun) n += countItems(item.subRun);
  }
  return n;
}

function runOf(tree: TranscriptTree, event: WireRunEvent): RunTranscript {
  let run = tree.runs.get(event.runId);
  if (run) return run;
  run = { runId: event.runId, path: event.path, agent: event.agent, items: [], status: 'running' };
  tree.runs.set(event.runId, run);
  const parentId = parentRunId(event.runId);
  const parentCall = parentId !== undefined ? subRunCall(tree, parentId, event.runId) : undefined;
  if (parentCall) parentCall.subRun = run;
  else if (!tree.root) (tree as { root: RunTranscript | undefined }).root = run;
  else if (parentId !== undefined) tree.runs.get(parentId)?.items.push(orphanCall(run));
  return run;
}

/** `run_x/2.0` → `run_x`; undefined for a root run id. */
export function parentRunId(runId: string): string | undefined {
  const cut = runId.lastIndexOf('/');
  return cut > 0 ? runId.slice(0, cut) : undefined;
}

/** The call a sub-run belongs to: sub-run `<parent>/<turn>.<index>` is the index-th call of that turn's reply. */
function subRunCall(tree: TranscriptTree, parentId: string, runId: string): ToolCallItem | undefined {
  const match = /\/(\d+)\.(\d+)$/.exec(runId);
  const parent = tree.runs.get(parentId);
  if (!match || !parent) return undefined;
  const [turn, index] = [Number(match[1]), Number(match[2])];
  const calls = parent.items.filter((i): i is ToolCallItem => i.kind === 'tool' && i.turn === turn);
  return calls[index];
}

function orphanCall(run: RunTranscript): ToolCallItem {
  return {
    kind: 'tool', runId: run.runId, callId: '?', tool: `sub-run ${run.runId}`, turn: 0, agent: run.agent, rawArgs: '', args: undefined,
    status: 'running', output: undefined, result: undefined, details: undefined, isError: false, terminate: false, blockedBy: undefined,
    progress: [], failures: [], approvalId: undefined, subRun: run,
  };
}

function lastAssistant(run: RunTranscript, turn: number): Extract<TranscriptItem, { kind: 'assistant' }> | undefined {
  for (let i = run.items.length - 1; i >= 0; i--) {
    const item = run.items[i]!;
    if (item.kind === 'assistant') return item.turn === turn ? item : undefined;
  }
  return undefined;
}

function streamingItem(run: RunTranscript, agent: string, turn: number, fresh = false): Extract<TranscriptItem, { kind: 'assistant' }> {
  const open = fresh ? undefined : lastAssistant(run, turn);
  if (open && open.streaming) return open;
  const item: Extract<TranscriptItem, { kind: 'assistant' }> = { kind: 'assistant', agent, turn, text: '', reasoning: '', streaming: true, discarded: undefined, runTotal: undefined };
  run.items.push(item);
  return item;
}

function callItem(tree: TranscriptTree, run: RunTranscript, runId: string, callId: string, tool: string, turn: number, agent: string, rawArgs: string): ToolCallItem {
  const key = callKey(runId, callId);
  const existing = tree.calls.get(key);
  // A repeated call id in a later turn is a new call.
  if (existing && existing.turn === turn) return existing;
  const item: ToolCallItem = {
    kind: 'tool', runId, callId, tool, turn, agent, rawArgs, args: undefined, status: 'requested', output: undefined, result: undefined,
    details: undefined, isError: false, terminate: false, blockedBy: undefined, progress: [], failures: [], approvalId: undefined, subRun: undefined,
  };
  tree.calls.set(key, item);
  run.items.push(item);
  return item;
}

function toolCall(tree: TranscriptTree, run: RunTranscript, event: WireRunEvent, turn: number): ToolCallItem {
  const call = (event.call ?? {}) as { id?: string; name?: string; arguments?: string };
  // A resolved call's events carry the call that runs as `call` and the model's as `requested`.
  const asked = (event.requested ?? call) as { id?: string; name?: string; arguments?: string };
  const item = tree.calls.get(callKey(event.runId, String(call.id ?? ''))) ?? callItem(tree, run, event.runId, String(call.id ?? ''), String(asked.name ?? ''), turn, event.agent, String(asked.arguments ?? ''));
  if (event.requested !== undefined) item.ran = { name: String(call.name ?? ''), arguments: String(call.arguments ?? '') };
  return item;
}
