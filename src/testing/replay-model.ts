import { UserError } from '../errors.js';
import type { Model, ModelRequest, ModelStreamPart } from '../models/model.js';
import type { RunExport } from '../store/format.js';
import type { CheckpointStore, StoredRun } from '../store/records.js';
import type { AssistantMessage, Message } from '../types.js';

/** The replayed run asked the model something else than the recorded run did (its code, prompt or tools changed). */
export class ReplayMismatch extends UserError {}

/** One recorded run's model replies, each with the transcript its request carried. */
interface Recording {
  readonly replies: readonly { readonly reply: AssistantMessage; readonly before: readonly Message[] }[];
}

/**
 * A model that answers from a stored run: the n-th request of the replayed run (and of each
 * of its sub-runs) gets the n-th reply the recorded run stored, so the replay makes the same
 * tool calls and ends with the same output, offline. Before it answers, it checks that the
 * request's transcript is the recorded one (role, text, tool calls, results); the first
 * difference fails the request with ReplayMismatch, naming the run, the request and the
 * message that differs (`mismatches` keeps every one, for a test to assert on).
 *
 * Give it to every agent of the system (`new Agent({ ..., model: replay })`) and run the same
 * input. Sub-runs are matched by their place in the tree (`<root>/<turn>.<index>`), so the
 * replay may use any run id. Tools run for real: stub the ones that reach the network.
 * Token usage is not recorded per reply: the replay's usage counts requests only.
 */
export class ReplayModel implements Model {
  readonly name = 'replay';
  /** Every mismatch met so far, in order. */
  readonly mismatches: ReplayMismatch[] = [];
  private replayRoot: string | undefined;
  private readonly served = new Map<string, number>();

  constructor(
    private readonly recordedRoot: string,
    private readonly recordings: ReadonlyMap<string, Recording>,
  ) {}

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const runId = request.runId ?? '';
    this.replayRoot ??= runId;
    const suffix = runId.startsWith(this.replayRoot) ? runId.slice(this.replayRoot.length) : undefined;
    const recorded = suffix === undefined ? undefined : `${this.recordedRoot}${suffix}`;
    const recording = recorded === undefined ? undefined : this.recordings.get(recorded);
    const n = this.served.get(runId) ?? 0;
    this.served.set(runId, n + 1);
    const where = `replay of run '${recorded ?? runId}', request ${n + 1} (agent '${request.agent}')`;
    if (!recording) throw this.mismatch(`${where}: the recording has no such run.`);
    const step = recording.replies[n];
    if (!step) throw this.mismatch(`${where}: the recorded run made only ${recording.replies.length} request${recording.replies.length === 1 ? '' : 's'}.`);
    const difference = firstDifference(step.before, request.messages);
    if (difference) throw this.mismatch(`${where} differs from the recorded one at message ${difference.index + 1}: recorded ${difference.recorded}, now ${difference.now}.`);
    if (step.reply.agent !== request.agent) throw this.mismatch(`${where}: the recorded request came from agent '${step.reply.agent}'.`);
    if (step.reply.reasoning) yield { type: 'reasoning_delta', delta: step.reply.reasoning };
    if (step.reply.content) yield { type: 'text_delta', delta: step.reply.content };
    for (const call of step.reply.toolCalls) yield { type: 'tool_call', call };
    yield { type: 'finish', usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 }, finishReason: step.reply.toolCalls.length ? 'tool-calls' : 'stop' };
  }

  private mismatch(message: string): ReplayMismatch {
    const error = new ReplayMismatch(message);
    this.mismatches.push(error);
    return error;
  }
}

/** A message as compared and shown: what the model sees of it. */
function shown(message: Message | undefined): string {
  if (!message) return '(nothing)';
  if (message.role === 'assistant') return JSON.stringify({ role: 'assistant', content: message.content, toolCalls: message.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments })) });
  if (message.role === 'tool') return JSON.stringify({ role: 'tool', callId: message.callId, name: message.name, content: message.content, isError: message.isError });
  return JSON.stringify({ role: message.role, content: message.content });
}

function firstDifference(recorded: readonly Message[], now: readonly Message[]): { index: number; recorded: string; now: string } | undefined {
  for (let i = 0; i < Math.max(recorded.length, now.length); i++) {
    const a = shown(recorded[i]);
    const b = shown(now[i]);
    if (a !== b) return { index: i, recorded: a, now: b };
  }
  return undefined;
}

/** The replies of one stored run, each with the transcript before it. */
function recordingOf(run: StoredRun): Recording {
  const transcript: Message[] = [];
  const replies: Array<{ reply: AssistantMessage; before: readonly Message[] }> = [];
  for (const entry of run.entries) {
    if (entry.kind === 'reply' && entry.message.role === 'assistant') replies.push({ reply: entry.message, before: transcript.slice() });
    if ((entry.kind === 'input' || entry.kind === 'reply' || entry.kind === 'result')) transcript.push(entry.message);
  }
  return { replies };
}

/**
 * A ReplayModel for the run `runId` stored in `source`: a checkpoint store, or exported runs
 * (`exportRun`, kept as a test fixture: the run and each of its sub-runs).
 * @throws UserError when the run (or one of its sub-runs) is not there.
 */
export async function replayModel(source: CheckpointStore | readonly RunExport[], runId: string): Promise<ReplayModel> {
  const load = async (id: string): Promise<StoredRun | undefined> => {
    if (Array.isArray(source)) {
      const found = (source as readonly RunExport[]).find((e) => e.runId === id);
      return found && { head: found.head, entries: found.entries };
    }
    return (source as CheckpointStore).load(id);
  };
  const recordings = new Map<string, Recording>();
  const queue = [runId];
  for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    const run = await load(id);
    if (!run) throw new UserError(`replayModel: no stored run '${id}'${id === runId ? '' : ` (a sub-run of '${runId}')`}.`);
    recordings.set(id, recordingOf(run));
    for (const entry of run.entries) if (entry.kind === 'subrun_start') queue.push(entry.runId);
  }
  return new ReplayModel(runId, recordings);
}
