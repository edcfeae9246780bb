/**
 * Provider stream → troupe parts, for both specifications troupe speaks: `LanguageModelV3`
 * and `LanguageModelV4` stream parts differ only in parts troupe does not use (v4 adds
 * `ping`, `custom` and `reasoning-file`), so one translator reads both.
 */
import type { LanguageModelV3StreamPart, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import type { Usage } from '../types.js';
import { ReasoningBlocks, metadataOf } from './ai-sdk-parts.js';
import type { ModelStreamPart } from './model.js';
import { StreamErrorPart } from './provider-error.js';

/** A stream part of either specification. */
export type SpecStreamPart = LanguageModelV3StreamPart | LanguageModelV4StreamPart;


interface PendingInput {
  readonly id: string;
  readonly name: string;
  text: string;
  ended: boolean;
}

/**
 * Turns provider stream parts into troupe parts. Tool calls are emitted once each when
 * complete: on a `tool-call` part, or (for providers that only stream tool inputs) for
 * every `tool-input-end` that no `tool-call` followed, before `finish`.
 */
export class StreamTranslator {
  private readonly inputs = new Map<string, PendingInput>();
  private readonly reasoning = new ReasoningBlocks();
  private readonly emitted = new Set<string>();
  private finished = false;

  push(part: SpecStreamPart): ModelStreamPart[] {
    switch (part.type) {
      case 'text-delta':
        return part.delta === '' ? [] : [{ type: 'text_delta', delta: part.delta }];
      case 'reasoning-start':
        this.reasoning.start(part.id, part.providerMetadata);
        return [];
      case 'reasoning-delta':
        // An empty delta may still carry metadata (e.g. Anthropic's signature).
        this.reasoning.delta(part.id, part.delta, part.providerMetadata);
        return part.delta === '' ? [] : [{ type: 'reasoning_delta', delta: part.delta }];
      case 'reasoning-end':
        return this.reasoning.end(part.id, part.providerMetadata);
      case 'tool-input-start':
        if (!part.providerExecuted) this.inputs.set(part.id, { id: part.id, name: part.toolName, text: '', ended: false });
        return [];
      case 'tool-input-delta': {
        const input = this.inputs.get(part.id);
        if (input) input.text += part.delta;
        return [];
      }
      case 'tool-input-end': {
        const input = this.inputs.get(part.id);
        if (input) input.ended = true;
        return [];
      }
      case 'tool-call': {
        // Provider-executed tools (e.g. a hosted web search) already ran on the provider's side.
        if (part.providerExecuted || this.emitted.has(part.toolCallId)) return [];
        this.emitted.add(part.toolCallId);
        this.inputs.delete(part.toolCallId);
        const providerMetadata = metadataOf(part.providerMetadata);
        const call = { id: part.toolCallId, name: part.toolName, arguments: part.input };
        return [{ type: 'tool_call', call: providerMetadata ? { ...call, providerMetadata } : call }];
      }
      case 'finish': {
        const finishReason = finishReasonOf(part.finishReason);
        const out = [...this.reasoning.flush(), ...this.flushInputs(finishReason === 'length')];
        this.finished = true;
        out.push({ type: 'finish', usage: toUsage(part.usage), finishReason });
        return out;
      }
      case 'error':
        throw new StreamErrorPart(part.error);
      default:
        // stream-start, response-metadata, text start/end, sources, files, raw,
        // provider-executed tool results and approval requests carry nothing troupe uses;
        // nor do v4's ping, custom content and reasoning files.
        return [];
    }
  }

  /** The stream ended: flush completed tool inputs if no `finish` part did. */
  end(): ModelStreamPart[] {
    return this.finished ? [] : [...this.reasoning.flush(), ...this.flushInputs()];
  }

  /**
   * `cutOff`: the reply hit the output token limit, so an input that never ended is sent on
   * as it is (its arguments incomplete): the run answers it with a "cut off" error result
   * instead of dropping it. Otherwise a never-ended input is no call.
   */
  private flushInputs(cutOff = false): ModelStreamPart[] {
    const out: ModelStreamPart[] = [];
    for (const input of this.inputs.values()) {
      if ((!input.ended && !cutOff) || this.emitted.has(input.id)) continue;
      this.emitted.add(input.id);
      out.push({ type: 'tool_call', call: { id: input.id, name: input.name, arguments: input.text } });
    }
    this.inputs.clear();
    return out;
  }
}

/**
 * v3/v4 usage ({ inputTokens: { total }, outputTokens: { total } }); flat v2-style numbers are
 * read too. A count that is not a number is passed on as it is, so the model turn rejects it
 * with a ModelError naming the field (instead of the count silently missing from budgets).
 */
export function toUsage(usage: unknown): Partial<Usage> {
  if (typeof usage !== 'object' || usage === null) return {};
  const input = tokenCount((usage as Record<string, unknown>).inputTokens);
  const output = tokenCount((usage as Record<string, unknown>).outputTokens);
  const out: Partial<Usage> = {};
  if (input !== undefined) out.inputTokens = input;
  if (output !== undefined) out.outputTokens = output;
  if (typeof input === 'number' && typeof output === 'number') out.totalTokens = input + output;
  else if (input === undefined && typeof output === 'number') out.totalTokens = output;
  else if (output === undefined && typeof input === 'number') out.totalTokens = input;
  return out;
}

/** The count, undefined when the provider did not report it (the value as it is when it is malformed). */
function tokenCount(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'object' && !Array.isArray(value)) {
    const total = (value as { total?: unknown }).total;
    return total === undefined || total === null ? undefined : (total as number);
  }
  return value as number;
}

function finishReasonOf(reason: unknown): string | undefined {
  if (typeof reason === 'string') return reason;
  if (typeof reason === 'object' && reason !== null) {
    const unified = (reason as { unified?: unknown }).unified;
    if (typeof unified === 'string') return unified;
  }
  return undefined;
}
