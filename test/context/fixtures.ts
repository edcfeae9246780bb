import { z } from 'zod';
import { tool, type ContextPolicy, type RunEvent } from '../../src/index.js';
import { ScriptedModel, call, text, type RecordedRequest } from '../../src/entry/testing.js';

/** A tool whose result for `n` is `size` characters, different per call (so views are checkable). */
export function bigTool(size: number) {
  return tool({
    name: 'fetch_page',
    description: 'Returns a page.',
    parameters: z.object({ n: z.number() }),
    execute: ({ n }) => pageText(n, size),
  });
}

export function pageText(n: number, size: number): string {
  const head = `page ${n}: `;
  return head + 'abcdefghij'.repeat(Math.ceil(size / 10)).slice(0, size - head.length);
}

/** `turns` replies that each call fetch_page (ids c1..cN), then a final text reply. */
export function pagesScript(turns: number, final = 'done'): ScriptedModel {
  const model = new ScriptedModel([]);
  for (let i = 1; i <= turns; i++) model.push(call('fetch_page', { n: i }, `c${i}`));
  return model.push(text(final));
}

/** A summariser whose answer names what it summarised (deterministic, so reruns agree). */
export function summaryModel(): ScriptedModel {
  return new ScriptedModel([], { record: true }).push(
    ...Array.from({ length: 50 }, (_, i) => ({ text: '', calls: [], respond: (r: { messages: readonly { content: string }[] }) => ({ text: `summary ${i + 1} of ${r.messages[0]!.content.length} chars` }) })),
  );
}

/**
 * One request as bytes: system prompt and tools, then one JSON line per message, so a
 * request that only adds messages is a byte-for-byte extension of the one before.
 */
export function serialize(request: RecordedRequest): string {
  return [JSON.stringify({ system: request.system, tools: request.tools }), ...request.messages.map((m) => JSON.stringify(m))].map((line) => `${line}\n`).join('');
}

export function compactions(events: readonly RunEvent[]): Extract<RunEvent, { type: 'context_compacted' }>[] {
  return events.filter((e): e is Extract<RunEvent, { type: 'context_compacted' }> => e.type === 'context_compacted');
}

export const tightPolicy = (extra: Partial<ContextPolicy> = {}): ContextPolicy => ({ maxInputTokens: 3_000, ...extra });
