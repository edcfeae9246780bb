import { ModelError } from '../errors.js';
import type { Model } from '../models/model.js';
import { checkedUsage } from '../models/usage.js';
import { errorText } from '../tools/render.js';
import type { Message, Usage } from '../types.js';

/** The conversation part to summarise as plain text, one line per message or call. */
export function renderSegment(previous: string | undefined, segment: readonly Message[]): string {
  const lines: string[] = [];
  for (const message of segment) {
    if (message.role === 'user') lines.push(`User: ${message.content}`);
    else if (message.role === 'tool') lines.push(`Result of ${message.name} [${message.callId}]${message.isError ? ' (error)' : ''}: ${message.content}`);
    else if (message.role === 'assistant') {
      if (message.content !== '') lines.push(`Assistant: ${message.content}`);
      for (const call of message.toolCalls) lines.push(`Assistant called ${call.name} [${call.id}] with ${call.arguments}`);
    }
  }
  const body = lines.join('\n');
  return previous === undefined ? body : `The summary so far:\n${previous}\n\nWhat happened next:\n${body}`;
}

/**
 * Asks `model` for a summary (a request without tools). Its usage is checked like a reply's.
 * @throws ModelError when the model fails or answers with no text.
 */
export async function writeSummary(
  model: Model,
  ask: { readonly runId: string; readonly agent: string; readonly instructions: string },
  previous: string | undefined,
  segment: readonly Message[],
  signal: AbortSignal,
): Promise<{ text: string; usage: Partial<Usage> }> {
  let text = '';
  let usage: Partial<Usage> = {};
  try {
    const messages: Message[] = [{ role: 'user', content: renderSegment(previous, segment) }];
    for await (const part of model.stream({ runId: ask.runId, agent: ask.agent, system: ask.instructions, messages, tools: [], settings: {}, signal })) {
      if (part.type === 'text_delta') text += part.delta;
      else if (part.type === 'finish') usage = checkedUsage(part.usage, model.name);
    }
  } catch (error) {
    if (error instanceof ModelError) throw error;
    throw new ModelError(`Context summary by model '${model.name}' failed: ${errorText(error)}`, { cause: error });
  }
  if (text.trim() === '') throw new ModelError(`Context summary by model '${model.name}' failed: the model answered with no text.`);
  return { text: text.trim(), usage };
}
