/**
 * The AI SDK adapter's handling of parts: content parts (images, files) of user messages and
 * tool results, reasoning blocks with their provider metadata, and tool-call metadata, in
 * both directions (troupe transcript → v3 prompt, v3/v4 stream → troupe parts; a v4 model's
 * prompt is the v3 one with its file data re-tagged, ai-sdk-v4.ts).
 */
import type {
  LanguageModelV3Message,
  LanguageModelV3ToolResultOutput,
  SharedV3ProviderMetadata,
  SharedV3ProviderOptions,
} from '@ai-sdk/provider';
import type { ContentPart, ProviderMetadata, ReasoningPart } from '../message-parts.js';
import type { AssistantMessage, ToolResultMessage, UserMessage } from '../types.js';
import type { ContentPartSupport, ModelStreamPart } from './model.js';

type UserContent = Extract<LanguageModelV3Message, { role: 'user' }>['content'];
type AssistantContent = Extract<LanguageModelV3Message, { role: 'assistant' }>['content'];

/** Provider families whose AI SDK providers take images and files inside tool results. */
const TOOL_RESULT_MEDIA_FAMILIES = new Set(['anthropic', 'google', 'vertex', 'bedrock']);

/**
 * Default content-part support of an AI SDK model: user images/files everywhere; media in tool
 * results only for the families whose providers send them on (the openai-compatible family
 * would flatten them to JSON text, so it gets the text projection).
 */
export function defaultContentParts(model: { readonly provider: string }): ContentPartSupport {
  const family = model.provider.split('.')[0]!.trim();
  return { toolResults: TOOL_RESULT_MEDIA_FAMILIES.has(family), userInput: true };
}

/** A user message as v3 content: its parts when it has media and the model takes them, else its text. */
export function userContent(message: UserMessage, support: ContentPartSupport): UserContent {
  if (!message.parts || !support.userInput) return [{ type: 'text', text: message.content }];
  return message.parts.map((part) =>
    part.type === 'text'
      ? { type: 'text', text: part.text }
      : { type: 'file', data: part.data, mediaType: part.mediaType, ...(part.type === 'file' && part.filename !== undefined ? { filename: part.filename } : {}) },
  );
}

/** A tool result's v3 output: `content` with media parts when the model takes them, else text; errors as `error-text`. */
export function toolResultOutput(message: ToolResultMessage, support: ContentPartSupport): LanguageModelV3ToolResultOutput {
  if (message.isError) return { type: 'error-text', value: message.content };
  if (!message.parts || !support.toolResults) return { type: 'text', value: message.content };
  return { type: 'content', value: message.parts.map(toolOutputPart) };
}

function toolOutputPart(part: ContentPart): Extract<LanguageModelV3ToolResultOutput, { type: 'content' }>['value'][number] {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image-data', data: part.data, mediaType: part.mediaType };
    case 'file':
      return { type: 'file-data', data: part.data, mediaType: part.mediaType, ...(part.filename !== undefined ? { filename: part.filename } : {}) };
  }
}

/**
 * An assistant turn as v3 content: reasoning (its blocks with their provider metadata as
 * `providerOptions` when kept, else the reasoning text), text, then the tool calls with theirs.
 * `parseInput` turns a call's argument text into the input object providers expect.
 */
export function assistantContent(message: AssistantMessage, parseInput: (text: string) => unknown): AssistantContent {
  const content: AssistantContent = [];
  if (message.reasoningParts && message.reasoningParts.length > 0) {
    for (const part of message.reasoningParts) {
      content.push(part.providerMetadata ? { type: 'reasoning', text: part.text, providerOptions: options(part.providerMetadata) } : { type: 'reasoning', text: part.text });
    }
  } else if (message.reasoning) content.push({ type: 'reasoning', text: message.reasoning });
  if (message.content !== '' || message.toolCalls.length === 0) content.push({ type: 'text', text: message.content });
  for (const call of message.toolCalls) {
    const part: AssistantContent[number] = { type: 'tool-call', toolCallId: call.id, toolName: call.name, input: parseInput(call.arguments) };
    if (call.providerMetadata) part.providerOptions = options(call.providerMetadata);
    content.push(part);
  }
  return content;
}

function options(metadata: ProviderMetadata): SharedV3ProviderOptions {
  return metadata as SharedV3ProviderOptions;
}

/** Provider metadata of a stream part as troupe keeps it (undefined when empty). */
export function metadataOf(value: SharedV3ProviderMetadata | undefined): ProviderMetadata | undefined {
  if (!value || typeof value !== 'object') return undefined;
  return Object.keys(value).length > 0 ? (value as ProviderMetadata) : undefined;
}

interface OpenReasoning {
  text: string;
  metadata: Record<string, Record<string, unknown>> | undefined;
}

/**
 * Collects reasoning blocks from `reasoning-start/delta/end` parts: text and provider
 * metadata (which may arrive on any of the three, e.g. Anthropic's signature on an empty
 * delta, redacted data on the start) are merged per block; each ended block becomes one
 * `reasoning_part`.
 */
export class ReasoningBlocks {
  private readonly open = new Map<string, OpenReasoning>();

  start(id: string, metadata: SharedV3ProviderMetadata | undefined): void {
    const block: OpenReasoning = { text: '', metadata: undefined };
    this.open.set(id, block);
    merge(block, metadata);
  }

  delta(id: string, delta: string, metadata: SharedV3ProviderMetadata | undefined): void {
    let block = this.open.get(id);
    if (!block) {
      // A provider that streams reasoning without a start part.
      block = { text: '', metadata: undefined };
      this.open.set(id, block);
    }
    block.text += delta;
    merge(block, metadata);
  }

  end(id: string, metadata: SharedV3ProviderMetadata | undefined): ModelStreamPart[] {
    const block = this.open.get(id);
    if (!block) return [];
    merge(block, metadata);
    this.open.delete(id);
    return [{ type: 'reasoning_part', part: toPart(block) }];
  }

  /** The stream finished: blocks that never ended, in start order. */
  flush(): ModelStreamPart[] {
    const out: ModelStreamPart[] = [];
    for (const block of this.open.values()) out.push({ type: 'reasoning_part', part: toPart(block) });
    this.open.clear();
    return out;
  }
}

function toPart(block: OpenReasoning): ReasoningPart {
  return block.metadata ? { text: block.text, providerMetadata: block.metadata } : { text: block.text };
}

function merge(block: OpenReasoning, metadata: SharedV3ProviderMetadata | undefined): void {
  if (!metadata) return;
  for (const [provider, values] of Object.entries(metadata)) {
    if (typeof values !== 'object' || values === null) continue;
    block.metadata ??= {};
    block.metadata[provider] = { ...(block.metadata[provider] ?? {}), ...(values as Record<string, unknown>) };
  }
}
