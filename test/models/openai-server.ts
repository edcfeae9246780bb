/**
 * A loopback server that speaks the OpenAI chat-completions protocol (streaming only):
 * replies are scripted, every request is recorded, and it can fail in the ways real
 * servers do (HTTP errors, malformed chunks, dropped connections, streams that hang).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedHttpRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: any;
}

export type Reply =
  /** SSE chunks (objects are JSON-encoded, strings are sent as they are), then `data: [DONE]`. */
  /**
   * `drop`: the connection is closed after the chunks (a stream cut mid-reply); given a
   * promise, once it settles (e.g. when the client has seen the chunks: Node 24's fetch may
   * drop data still unread when the connection closes).
   */
  | { readonly kind: 'sse'; readonly chunks: ReadonlyArray<object | string>; readonly done?: boolean; readonly hang?: boolean; readonly drop?: boolean | Promise<unknown> }
  | { readonly kind: 'status'; readonly status: number; readonly body?: string; readonly headers?: Record<string, string> }
  /** Drops the connection without answering. */
  | { readonly kind: 'destroy' };

export type ReplySource = Reply | ((body: any) => Reply);

export interface ChatServer {
  readonly baseURL: string;
  readonly requests: RecordedHttpRequest[];
  push(...replies: ReplySource[]): void;
  /** Resolves when a response stream of a `hang` reply was closed by the client. */
  readonly hungUpOn: Promise<void>;
  /** Resolves when the server got its first request with a `hang` reply. */
  readonly hanging: Promise<void>;
  close(): Promise<void>;
}

export async function startChatServer(replies: ReplySource[] = []): Promise<ChatServer> {
  const queue = [...replies];
  const requests: RecordedHttpRequest[] = [];
  let hungUp!: () => void;
  let hangStarted!: () => void;
  const hungUpOn = new Promise<void>((resolve) => (hungUp = resolve));
  const hanging = new Promise<void>((resolve) => (hangStarted = resolve));
  const open = new Set<ServerResponse>();

  const server: Server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (raw += chunk));
    req.on('end', () => {
      let body: unknown = raw;
      try {
        body = JSON.parse(raw);
      } catch {
        // keep the raw text
      }
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const next = queue.shift();
      const reply: Reply = next === undefined
        ? { kind: 'status', status: 400, body: JSON.stringify({ error: { message: 'the test server has no scripted reply left' } }) }
        : typeof next === 'function'
          ? next(body)
          : next;
      answer(reply, req, res);
    });
  });

  function answer(reply: Reply, req: IncomingMessage, res: ServerResponse): void {
    switch (reply.kind) {
      case 'status':
        res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
        res.end(reply.body ?? '');
        return;
      case 'destroy':
        req.socket.destroy();
        return;
      case 'sse': {
        open.add(res);
        res.on('close', () => {
          open.delete(res);
          if (reply.hang) hungUp();
        });
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
        for (const c of reply.chunks) res.write(`data: ${typeof c === 'string' ? c : JSON.stringify(c)}\n\n`);
        if (reply.hang) {
          hangStarted();
          return;
        }
        if (reply.drop) {
          // Flushes what was written, then closes the connection mid-body (no final chunk).
          const drop = (): void => void req.socket.end();
          if (reply.drop === true) drop();
          else void reply.drop.then(drop, drop);
          return;
        }
        if (reply.done !== false) res.write('data: [DONE]\n\n');
        res.end();
      }
    }
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...more) => void queue.push(...more),
    hungUpOn,
    hanging,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------
// Chunk builders

const BASE = { id: 'chatcmpl-test', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'test-model' } as const;

export function chunk(delta: object, finishReason: string | null = null): object {
  return { ...BASE, choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

export function usageChunk(prompt: number, completion: number): object {
  return { ...BASE, choices: [], usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } };
}

export interface ReplyOptions {
  usage?: [prompt: number, completion: number];
  reasoning?: string;
}

/** A text reply streamed word by word, with usage in the final chunk. */
export function textReply(text: string, options: ReplyOptions = {}): Reply {
  const chunks: object[] = [chunk({ role: 'assistant', content: '' })];
  if (options.reasoning) chunks.push(chunk({ reasoning_content: options.reasoning }));
  for (const piece of text.match(/\S+\s*|\s+/g) ?? []) chunks.push(chunk({ content: piece }));
  chunks.push(chunk({}, 'stop'));
  if (options.usage) chunks.push(usageChunk(...options.usage));
  return { kind: 'sse', chunks };
}

export interface WireCall {
  id: string;
  name: string;
  /** An object (JSON-encoded) or raw argument text. */
  args: object | string;
}

/**
 * Tool calls the way OpenAI streams them: a first delta with id and name, then the
 * arguments split over `pieces` chunks. `interleave` alternates the calls' chunks.
 */
export function toolCallsReply(calls: WireCall[], options: ReplyOptions & { pieces?: number; text?: string; interleave?: boolean } = {}): Reply {
  const pieces = options.pieces ?? 3;
  const chunks: object[] = [chunk({ role: 'assistant', content: null })];
  if (options.text) chunks.push(chunk({ content: options.text }));
  const perCall = calls.map((call, index) => {
    const text = typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
    const size = Math.ceil(text.length / pieces) || 1;
    const parts: object[] = [chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] })];
    for (let i = 0; i < text.length; i += size) {
      parts.push(chunk({ tool_calls: [{ index, function: { arguments: text.slice(i, i + size) } }] }));
    }
    return parts;
  });
  if (options.interleave) {
    const longest = Math.max(...perCall.map((p) => p.length));
    for (let i = 0; i < longest; i++) for (const parts of perCall) if (parts[i]) chunks.push(parts[i]!);
  } else {
    for (const parts of perCall) chunks.push(...parts);
  }
  chunks.push(chunk({}, 'tool_calls'));
  if (options.usage) chunks.push(usageChunk(...options.usage));
  return { kind: 'sse', chunks };
}

export function errorStatus(status: number, message: string, headers?: Record<string, string>): Reply {
  return { kind: 'status', status, body: JSON.stringify({ error: { message, type: 'server_error' } }), headers };
}
