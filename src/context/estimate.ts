import type { ToolSchema } from '../tools/tool.js';
import type { Message } from '../types.js';

/**
 * Token estimates for compaction decisions: about four characters a token, plus a few
 * tokens of framing per message and per tool call. Deliberately simple and deterministic
 * (a resumed run must reach the same decisions); a provider's overflow error corrects it.
 */
export function estimateText(text: string): number {
  return Math.ceil(text.length / 4);
}

const MESSAGE_FRAMING = 4;

export function estimateMessage(message: Message): number {
  let tokens = MESSAGE_FRAMING + estimateText(message.content);
  if (message.role === 'assistant') {
    if (message.reasoning) tokens += estimateText(message.reasoning);
    for (const call of message.toolCalls) tokens += MESSAGE_FRAMING + estimateText(call.name) + estimateText(call.arguments) + estimateText(call.id);
  } else if (message.role === 'tool') {
    tokens += estimateText(message.name) + estimateText(message.callId);
  }
  return tokens;
}

const schemaTokens = new WeakMap<readonly ToolSchema[], number>();

/** The system prompt and the tool schemas: what every request carries besides its messages. */
export function estimateOverhead(system: string, tools: readonly ToolSchema[]): number {
  let toolTokens = schemaTokens.get(tools);
  if (toolTokens === undefined) {
    toolTokens = estimateText(JSON.stringify(tools));
    schemaTokens.set(tools, toolTokens);
  }
  return estimateText(system) + toolTokens;
}
