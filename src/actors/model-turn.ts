import { nanoid } from 'nanoid';
import { ModelError } from '../errors.js';
import { ContextOverflowError, isContextOverflow } from '../models/context-overflow.js';
import { checkedUsage } from '../models/usage.js';
import { errorText } from '../tools/render.js';
import type { Model, ModelRequest } from '../models/model.js';
import type { ReasoningPart, ToolCallRequest, Usage } from '../types.js';
import type { AfterModelResponse, JudgedReply } from '../hooks.js';

export interface ModelTurnInput {
  readonly model: Model;
  /** Built when the turn actually starts streaming, so it sees every entry action of the turn. */
  request(): Omit<ModelRequest, 'signal'>;
  /**
   * The same request with the run's signal, as the model gets it when no hook or contextPolicy
   * reshapes it: built in one step (no copy), its signal created when read (DirectModelRequest).
   */
  directRequest(abort: RunSignal): ModelRequest;
  onTextDelta(delta: string): void;
  onReasoningDelta(delta: string): void;
  /** The model voided its attempt so far (a `discard` part): what it had streamed, which the reply no longer holds. */
  onDiscard(discarded: DiscardedAttempt): void;
  /** beforeModelCall hooks: a view of the request for this call only. @throws HookError */
  shape?(request: Omit<ModelRequest, 'signal'>): Promise<Omit<ModelRequest, 'signal'>>;
  /** afterModelResponse hooks: their verdict, and the reply's text and calls if they replaced them. @throws HookError */
  judge?(reply: ModelReply): Promise<JudgedReply | undefined>;
  /**
   * The request with the transcript turned into the model's messages (transformContext,
   * convertToModel: custom roles dropped or rewritten), or undefined when the transcript is
   * the model's messages as it is. Asked once per turn, before contextPolicy. @throws HookError
   */
  converted?(): Promise<Omit<ModelRequest, 'signal'>> | undefined;
  /** Settles when the run's log has stored everything the request is built from (durable runs). Never rejects. */
  readonly logged?: Promise<void>;
  /**
   * contextPolicy: the compacted view of the request, before the hooks see it. `overflow`:
   * the provider refused the last view as too long; compact harder. @throws ModelError
   */
  compact?: (request: Omit<ModelRequest, 'signal'>, reason: 'threshold' | 'overflow', signal: AbortSignal) => Promise<CompactedRequest>;
}

/** A failed model attempt whose output was voided before the model tried again. */
export interface DiscardedAttempt {
  readonly attempt: number;
  readonly reason: string;
  readonly text: string;
  readonly reasoning: string;
  readonly calls: readonly ToolCallRequest[];
}


/** A request as contextPolicy compacted it, and what compacting spent (summary requests). */
export interface CompactedRequest {
  readonly request: Omit<ModelRequest, 'signal'>;
  readonly usage: Partial<Usage>;
  readonly requests: number;
  /** Smaller than the view the provider refused (for an overflow; else a retry is futile). */
  readonly shrunk: boolean;
}

export interface ModelReply {
  readonly text: string;
  readonly reasoning: string;
  /** The reasoning blocks, when any carries provider metadata (else undefined: `reasoning` says it all). */
  readonly reasoningParts?: readonly ReasoningPart[];
  readonly calls: ToolCallRequest[];
  readonly usage: Partial<Usage>;
  readonly finishReason: string | undefined;
  /** What the afterModelResponse hooks asked for, if anything. */
  readonly verdict?: AfterModelResponse;
  /** Requests made besides the reply's own (contextPolicy summaries); `usage` includes theirs. */
  readonly extraRequests?: number;
}

/**
 * One model turn: the contextPolicy view, the beforeModelCall view, the stream (deltas
 * forwarded as they arrive), then the afterModelResponse verdict. `abort` holds the run's
 * signal (created when first read, RunAbort): it aborts when the run ends. A context
 * overflow before anything streamed is compacted harder and asked once more. Rejects with
 * ModelError (ContextOverflowError for an overflow that compaction could not fix) or HookError.
 */
export async function streamModelTurn(input: ModelTurnInput, abort: RunSignal): Promise<ModelReply> {
  // Injected messages are stored before the model sees them; a failed write fails the run (log.failed) and aborts this.
  if (input.logged) await input.logged;
  if (abort.aborted) throw new ModelError('model request not sent: the run stopped');
  const send = async (request: Omit<ModelRequest, 'signal'>): Promise<ModelReply> => streamReply(input, withSignal(input.shape ? await input.shape(request) : request, abort));
  // Custom roles and transformContext/convertToModel: the model's view of the transcript, made once for this turn.
  const converting = input.converted?.();
  const view = converting ? await converting : undefined;
  const request = (): Omit<ModelRequest, 'signal'> => view ?? input.request();
  if (!input.compact) return judged(input, await (input.shape || view ? send(request()) : streamReply(input, input.directRequest(abort))));
  const spent = [await input.compact(request(), 'threshold', abort.signal)];
  let reply: ModelReply;
  try {
    reply = await send(spent[0]!.request);
  } catch (error) {
    if (!(error instanceof ContextOverflowError)) throw error;
    const harder = await input.compact(request(), 'overflow', abort.signal);
    spent.push(harder);
    if (!harder.shrunk) throw new ContextOverflowError(`${error.message} contextPolicy found nothing more to compact.`, { cause: error.cause });
    try {
      reply = await send(harder.request);
    } catch (again) {
      if (again instanceof ContextOverflowError) throw new ContextOverflowError(`${again.message} It still overflowed after contextPolicy compacted harder.`, { cause: again.cause });
      throw again;
    }
  }
  return judged(input, withSpend(reply, spent));
}

/** The reply's usage plus what compaction spent on summaries. */
function withSpend(reply: ModelReply, spent: readonly CompactedRequest[]): ModelReply {
  const requests = spent.reduce((n, s) => n + s.requests, 0);
  if (requests === 0) return reply;
  const usage = { ...reply.usage };
  for (const { usage: extra } of spent) {
    usage.inputTokens = (usage.inputTokens ?? 0) + (extra.inputTokens ?? 0);
    usage.outputTokens = (usage.outputTokens ?? 0) + (extra.outputTokens ?? 0);
    if (usage.totalTokens !== undefined || extra.totalTokens !== undefined) usage.totalTokens = (usage.totalTokens ?? 0) + (extra.totalTokens ?? 0);
  }
  return { ...reply, usage, extraRequests: requests };
}

async function judged(input: ModelTurnInput, reply: ModelReply): Promise<ModelReply> {
  if (!input.judge) return reply;
  const judgedReply = await input.judge(reply);
  if (!judgedReply) return reply;
  // A replaced reply is the reply from here on: stored, announced and preflighted as the model's own.
  const { verdict, replaced } = judgedReply;
  const out = replaced ? { ...reply, text: replaced.content, calls: [...replaced.toolCalls] } : reply;
  return verdict ? { ...out, verdict } : out;
}

/** The run's abort signal as a turn sees it: `aborted` reads without creating the signal. */
export interface RunSignal {
  readonly aborted: boolean;
  readonly signal: AbortSignal;
}

/** A request a hook or contextPolicy reshaped: the signal is created (such runs are rare; the copy is theirs). */
function withSignal(request: Omit<ModelRequest, 'signal'>, abort: RunSignal): ModelRequest {
  return { ...request, signal: abort.signal };
}

async function streamReply(input: ModelTurnInput, request: ModelRequest): Promise<ModelReply> {
  let text = '';
  let reasoning = '';
  let calls: ToolCallRequest[] = [];
  let reasoningParts: ReasoningPart[] = [];
  let usage: Partial<Usage> = {};
  let finishReason: string | undefined;
  try {
    for await (const part of input.model.stream(request)) {
      switch (part.type) {
        case 'text_delta':
          text += part.delta;
          input.onTextDelta(part.delta);
          break;
        case 'reasoning_delta':
          reasoning += part.delta;
          input.onReasoningDelta(part.delta);
          break;
        case 'reasoning_part':
          reasoningParts.push(part.part);
          break;
        case 'tool_call':
          calls.push(validCall(part.call, calls));
          break;
        case 'finish':
          usage = checkedUsage(part.usage, input.model.name);
          finishReason = part.finishReason;
          break;
        case 'discard':
          // The attempt so far is void: the reply starts again from nothing.
          input.onDiscard({ attempt: part.attempt, reason: part.reason, text, reasoning, calls });
          text = '';
          reasoning = '';
          calls = [];
          reasoningParts = [];
          usage = {};
          finishReason = undefined;
          break;
        default:
          throw new ModelError(`Model '${input.model.name}' sent an unknown stream part: ${JSON.stringify(part)}`);
      }
    }
  } catch (error) {
    // An overflow is known before anything streams; once output came, it is an ordinary failure.
    if (text === '' && reasoning === '' && calls.length === 0 && isContextOverflow(error)) {
      throw new ContextOverflowError(`Model '${input.model.name}' refused the request as longer than its context window: ${errorText(error)}.${input.compact ? '' : ' Set a contextPolicy on the agent or the run to compact what the model is sent.'}`, { cause: error });
    }
    if (error instanceof ModelError) throw error;
    throw new ModelError(`Model '${input.model.name}' failed: ${errorText(error)}`, { cause: error });
  }
  const reply: ModelReply = { text, reasoning, calls, usage, finishReason };
  return reasoningParts.some((p) => p.providerMetadata !== undefined) ? { ...reply, reasoningParts } : reply;
}

/**
 * A call must have a name and JSON text arguments. Its id may repeat within a reply (results
 * are paired by occurrence) and an empty or missing id is replaced by a generated one.
 */
function validCall(call: ToolCallRequest, earlier: readonly ToolCallRequest[]): ToolCallRequest {
  if (!call || typeof call.name !== 'string' || typeof call.arguments !== 'string' || (call.id !== undefined && typeof call.id !== 'string')) {
    throw new ModelError(`Malformed tool call #${earlier.length + 1} from the model: ${JSON.stringify(call)}`);
  }
  return call.id ? call : { ...call, id: `call_${nanoid(12)}` };
}
