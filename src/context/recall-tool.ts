import { z } from 'zod';
import { ToolError, UserError } from '../errors.js';
import { tool, type Tool } from '../tools/tool.js';
import type { Message, ToolResultMessage } from '../types.js';
import { RECALL_TOOL_NAME } from './view.js';

/**
 * `recall_tool_result({ callId })`: the full stored result of an earlier call, read from the
 * run's transcript (which always keeps it). When a model id repeats, the latest result with
 * it is returned. Its own results are never offloaded (they may be cleared later).
 * An unknown callId is the call's error result.
 */
export const recallToolResult: Tool = tool({
  name: RECALL_TOOL_NAME,
  description: 'Returns the full result of an earlier tool call that was offloaded or cleared to save context. Pass the callId the shortened result names.',
  parameters: z.object({ callId: z.string().describe('The callId named in the shortened result.') }),
  // The whole point is the full result: never truncated.
  maxOutputChars: null,
  execute: ({ callId }, ctx) => {
    const stored = findResult(ctx.transcript, callId);
    if (!stored) throw new ToolError(`No tool result with callId ${JSON.stringify(callId)} in this run.`);
    return stored.content;
  },
});

export function findResult(transcript: readonly Message[], callId: string): ToolResultMessage | undefined {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const message = transcript[i]!;
    if (message.role === 'tool' && message.callId === callId && message.name !== RECALL_TOOL_NAME) return message;
  }
  return undefined;
}

/** The agent's tools plus recall_tool_result when a context policy is on. @throws UserError on a name clash. */
export function withRecallTool<T extends Tool<any>>(tools: Map<string, T>, policyOn: boolean): Map<string, T> {
  if (!policyOn) return tools;
  if (tools.has(RECALL_TOOL_NAME)) throw new UserError(`Tool name conflict for '${RECALL_TOOL_NAME}': contextPolicy adds a tool of that name.`);
  tools.set(RECALL_TOOL_NAME, recallToolResult as unknown as T);
  return tools;
}
