import type { IncomingMessage, ServerResponse } from 'node:http';
import { toJsonSafe } from '../inspect/sanitize.js';
import { HttpError, SseStream, parseJsonBody, readBody } from './http.js';
import type { ServerRun } from './runs.js';
import { UIMessageChunkMapper, type OpenedApproval, type UIMessageChunk } from './ui-chunks.js';
import { UI_MESSAGE_STREAM_HEADERS } from './ui-stream.js';
import { uiInputOf, type UIInput } from './ui-input-parts.js';
import type { ContentPart } from '../message-parts.js';

/** What `POST /api/chat?protocol=ui` needs from the server. */
export interface UIChatContext {
  readonly maxBodyBytes: number;
  readonly maxInputChars: number;
  /** Registered agent names (the only one is the default). */
  readonly agentNames: readonly string[];
  readonly isClosing: () => boolean;
  /** Starts a server run (throws HttpError 404 for an unknown agent). */
  readonly startRun: (agent: string, input: string, parts?: readonly ContentPart[]) => ServerRun;
  /** Open streams, ended by `server.close()`. */
  readonly streams: Set<SseStream>;
}

/** A chat request after parsing: which agent runs on which input. */
export interface UIChatRequest {
  readonly agent: string;
  /** The input text (with `parts`: their text parts). */
  readonly input: string;
  /** Text and file parts of the last message, when it has file parts (attachments). */
  readonly parts?: readonly ContentPart[];
}

/**
 * `POST /api/chat?protocol=ui`: starts a run and answers with its AI SDK UI message stream
 * over SSE (`x-vercel-ai-ui-message-stream: v1`, `X-Run-Id`, `data: <chunk>` frames, then
 * `data: [DONE]`). Like the plain chat route, only this subscription ends with the client:
 * the run keeps going server-side and its approvals stay with `/api/chat/approve`.
 * The server's consumer holds at one approval at a time (events behind it wait), so every
 * call that starts waiting is also announced as soon as it opens (a macrotask later, once the
 * stream has caught up): the UI sees every open request, each exactly once.
 * Another `protocol` value is `400 invalid_protocol`. Body rules: `parseUIChatRequest`.
 */
export async function serveUIChat(req: IncomingMessage, res: ServerResponse, url: URL, ctx: UIChatContext): Promise<void> {
  const protocol = url.searchParams.get('protocol');
  if (protocol !== 'ui') throw new HttpError(400, 'invalid_protocol', `Unknown protocol '${protocol ?? ''}'. Supported: ui (AI SDK UI message stream).`);
  const request = parseUIChatRequest(await readBody(req, ctx.maxBodyBytes), req, { ...ctx, queryAgent: url.searchParams.get('agent') ?? undefined });
  if (ctx.isClosing()) throw new HttpError(503, 'closing', 'The server is shutting down.');
  const run = ctx.startRun(request.agent, request.input, request.parts);
  // SseStream's own content-type and cache headers stay; the protocol header marks the stream.
  const sse = new SseStream(res, { 'x-vercel-ai-ui-message-stream': UI_MESSAGE_STREAM_HEADERS['x-vercel-ai-ui-message-stream']!, 'x-run-id': run.id });
  ctx.streams.add(sse);
  const mapper = new UIMessageChunkMapper(run.id);
  const send = (chunks: readonly UIMessageChunk[]): void => {
    for (const chunk of chunks) sse.send(JSON.stringify(chunk));
  };
  const announce = (approvalId: string): void => {
    const waiting = run.handle.approvals.pending().find((approval) => approval.approvalId === approvalId);
    if (waiting) send(mapper.approvalOpened(toJsonSafe(waiting) as OpenedApproval));
  };
  const stopAnnouncing = run.handle.approvals.onOpened((approval) => void setImmediate(announce, approval.approvalId));
  const unsubscribe = run.subscribe({
    event: (event) => send(mapper.map(event)),
    end: () => {
      send(mapper.end());
      sse.send('[DONE]');
      sse.end();
    },
  });
  sse.onClose(() => {
    stopAnnouncing();
    unsubscribe();
    ctx.streams.delete(sse);
  });
}

export interface UIChatParseOptions {
  readonly maxInputChars: number;
  readonly agentNames: readonly string[];
  /** `?agent=` of the request URL. */
  readonly queryAgent?: string | undefined;
}

/**
 * Reads a UI chat body. Accepted shapes (other fields, such as `useChat`'s `id`, `trigger`,
 * `messageId` or your own `body` fields, are ignored):
 *
 * - `{ agent?, input: string }`
 * - `{ agent?, messages: UIMessage[] }` (what `useChat` / `DefaultChatTransport` send): the
 *   input is the text of the last message, which must be a user message (its `text` parts
 *   joined by newlines; a v4-style string `content` also works). Its `file` parts (base64
 *   `data:` URLs) join the input as image/file content parts. Earlier messages are not
 *   sent to the agent: each request starts a new run.
 *
 * The agent is `agent` from the body, else `?agent=` from the URL, else the server's only
 * agent. Errors are 4xx `HttpError`s (`unsupported_media_type`, `empty_body`,
 * `malformed_json`, `invalid_body`, `missing_field`, `invalid_field`).
 */
export function parseUIChatRequest(text: string, req: IncomingMessage, options: UIChatParseOptions): UIChatRequest {
  const fields = parseJsonBody(text, req);
  const { text: input, parts } = inputOf(fields);
  if (input.length === 0 && !parts) throw new HttpError(400, 'invalid_field', 'The input is empty.');
  if (input.length > options.maxInputChars) throw new HttpError(400, 'invalid_field', `The input is longer than ${options.maxInputChars} characters.`);
  return parts ? { agent: agentOf(fields.agent, options), input, parts } : { agent: agentOf(fields.agent, options), input };
}

function agentOf(value: unknown, options: UIChatParseOptions): string {
  if (value !== undefined) {
    if (typeof value !== 'string' || value.length === 0) throw new HttpError(400, 'invalid_field', "Field 'agent' must be a non-empty string.");
    return value;
  }
  if (options.queryAgent) return options.queryAgent;
  if (options.agentNames.length === 1) return options.agentNames[0]!;
  throw new HttpError(
    400,
    'missing_field',
    `Missing field 'agent' (or ?agent=): the server has ${options.agentNames.length} agents (${options.agentNames.join(', ') || 'none'}).`,
  );
}

function inputOf(fields: Record<string, unknown>): UIInput {
  const { input, messages } = fields;
  if (input !== undefined && messages !== undefined) throw new HttpError(400, 'invalid_body', "Give either 'input' or 'messages', not both.");
  if (input !== undefined) {
    if (typeof input !== 'string') throw new HttpError(400, 'invalid_field', "Field 'input' must be a string.");
    return { text: input };
  }
  if (messages === undefined) throw new HttpError(400, 'missing_field', "Missing field 'input' (text) or 'messages' (AI SDK UIMessage[]).");
  if (!Array.isArray(messages) || messages.length === 0) throw new HttpError(400, 'invalid_field', "Field 'messages' must be a non-empty array of UI messages.");
  const last = messages[messages.length - 1] as { role?: unknown; parts?: unknown; content?: unknown } | null;
  if (typeof last !== 'object' || last === null || last.role !== 'user') {
    throw new HttpError(
      400,
      'invalid_field',
      'The last message must be a user message: each request starts a new run, and approvals are decided through POST /api/chat/approve, not by resending messages.',
    );
  }
  if (Array.isArray(last.parts)) return uiInputOf(last.parts);
  if (typeof last.content === 'string') return { text: last.content };
  throw new HttpError(400, 'invalid_field', 'The last user message has neither text parts nor string content.');
}
