import { ScriptExhausted } from '../errors.js';
import type { ToolSchema } from '../tools/tool.js';
import type { AssistantMessage, Message, ToolCallRequest, Usage } from '../types.js';
import type { Model, ModelRequest, ModelStreamPart } from './model.js';

export { text, call, batch, type ScriptStep } from './script-steps.js';
import type { ScriptStep } from './script-steps.js';

export interface RecordedRequest {
  readonly agent: string;
  readonly system: string;
  readonly messages: readonly Message[];
  readonly tools: readonly ToolSchema[];
}

/**
 * A deterministic model for tests, demos and benchmarks: replies follow the script,
 * text streams word by word, and every request is recorded.
 *
 * Each run replays the script from its first step, so one model can serve any number of
 * runs (`Runner.run` and then `Runner.stream` on the same agent get the same replies).
 * A run is told apart by `ModelRequest.runId` (or, from a caller that sends none, by its
 * live transcript array). A run resumed in another process (after a crash or a park) with
 * the same script continues after the replies its agent already gave in that run, so a
 * stored reply is not asked again; a script holding only the rest of the run starts at its
 * first step. Give each agent its own ScriptedModel when runs resume across processes (a
 * shared model compares only the asking agent's replies).
 * A run that needs more replies than the script has fails with `ScriptExhausted`.
 */
export class ScriptedModel implements Model {
  readonly name = 'scripted';
  readonly requests: RecordedRequest[] = [];
  private readonly steps: ScriptStep[];
  /** Replies served so far, per run (keyed by run id; by the transcript array when there is none). */
  private readonly cursors = new Map<string, number>();
  private readonly cursorsByTranscript = new WeakMap<readonly Message[], number>();
  /** The cursor of the run that asked last, for `remaining`. */
  private lastCursor = 0;
  private readonly record: boolean;

  constructor(steps: readonly ScriptStep[] = [], options: { record?: boolean } = {}) {
    this.steps = [...steps];
    this.record = options.record ?? true;
  }

  /** Appends further replies (useful for long benchmark scripts). */
  push(...steps: ScriptStep[]): this {
    this.steps.push(...steps);
    return this;
  }

  /** Replies left for the run that asked last (the whole script before any request). */
  get remaining(): number {
    return this.steps.length - this.lastCursor;
  }

  async *stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    const index = (request.runId !== undefined ? this.cursors.get(request.runId) : this.cursorsByTranscript.get(request.messages)) ?? this.resumedAt(request);
    this.lastCursor = index;
    if (this.record) {
      this.requests.push({ agent: request.agent, system: request.system, messages: request.messages.slice(), tools: request.tools });
    }
    const step = this.steps[index];
    if (!step) {
      throw new ScriptExhausted(
        `ScriptedModel has no reply for request ${index + 1}: the script has ${this.steps.length} step${this.steps.length === 1 ? '' : 's'}.`,
      );
    }
    if (request.runId !== undefined) this.cursors.set(request.runId, index + 1);
    else this.cursorsByTranscript.set(request.messages, index + 1);
    this.lastCursor = index + 1;
    const reply = step.respond ? step.respond(request) : step;
    const content = reply.text ?? '';
    if (step.reasoning) yield { type: 'reasoning_delta', delta: step.reasoning };
    for (const delta of splitWords(content)) yield { type: 'text_delta', delta };
    for (const c of reply.calls ?? []) yield { type: 'tool_call', call: c };
    yield { type: 'finish', usage: step.usage ?? estimateUsage(request, content, reply.calls ?? []), finishReason: (reply.calls ?? []).length ? 'tool-calls' : 'stop' };
  }

  /**
   * Where a run this model has not served in this process stands in the script. A run
   * resumed in a new process (after a crash or a park) has replies of its agent in its
   * transcript already (after the session's history): when the script begins with exactly
   * those replies (same text, same calls by name and arguments; a `respond` step matches any
   * reply), the run continues after them instead of asking its first steps again. Otherwise
   * (a new run, or a script written for the rest of a resumed run) it starts at the first
   * step, as it does for a compacted or reshaped view (no `historyLength`).
   */
  private resumedAt(request: ModelRequest): number {
    if (request.historyLength === undefined) return 0;
    let given = 0;
    for (let i = request.historyLength; i < request.messages.length; i++) {
      const message = request.messages[i]!;
      if (message.role !== 'assistant' || message.agent !== request.agent) continue;
      const step = this.steps[given];
      if (!step || !sameReply(step, message)) return 0;
      given++;
    }
    return given;
  }
}

/** Whether a stored reply is the one a script step gives (call ids aside: unnamed calls get fresh ids per script). */
function sameReply(step: ScriptStep, message: AssistantMessage): boolean {
  if (step.respond) return true;
  if (step.text !== message.content || step.calls.length !== message.toolCalls.length) return false;
  return step.calls.every((c, i) => c.name === message.toolCalls[i]!.name && c.arguments === message.toolCalls[i]!.arguments);
}

/** Splits text into word-sized deltas that concatenate back to the original. */
function splitWords(content: string): string[] {
  return content === '' ? [] : (content.match(/\S+\s*|\s+/g) ?? [content]);
}

/** Deterministic usage: one token per four characters of the new input and of the output. */
function estimateUsage(request: ModelRequest, content: string, calls: readonly ToolCallRequest[]): Partial<Usage> {
  const last = request.messages[request.messages.length - 1];
  const inputChars = request.system.length + (last ? ('content' in last ? last.content.length : 0) : 0);
  const outputChars = content.length + calls.reduce((n, c) => n + c.name.length + c.arguments.length, 0);
  const inputTokens = Math.ceil(inputChars / 4);
  const outputTokens = Math.ceil(outputChars / 4);
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens };
}
