import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { TroupeServer } from '../../src/server/index.js';
import type { WireRecord, WireRunEvent } from '../../src/inspect/wire.js';

/** What the helpers need of a server: its URL and token (an in-process TroupeServer, or a `troupe serve` child process). */
export type ServerAddress = Pick<TroupeServer, 'url' | 'token'>;

export interface HttpResult {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: any;
}

export interface RequestOptions {
  readonly token?: string | null;
  readonly body?: string | object;
  readonly headers?: Record<string, string>;
}

/** One plain request (loopback). `token: null` sends no Authorization header. */
export function call(server: ServerAddress, method: string, path: string, options: RequestOptions = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    const token = options.token === undefined ? server.token : options.token;
    const req = httpRequest(`${server.url}${path}`, {
      method,
      headers: {
        ...(token !== null ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

export interface SseFrame {
  readonly id: string | undefined;
  readonly event: string | undefined;
  readonly data: string;
}

/** An open SSE response: pull frames one by one, or drop the connection. */
export class SseClient {
  readonly frames: SseFrame[] = [];
  private waiters: Array<() => void> = [];
  private buffer = '';
  ended = false;

  constructor(
    readonly res: IncomingMessage,
    private readonly destroy: () => void,
  ) {
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      this.buffer += chunk;
      let cut: number;
      while ((cut = this.buffer.indexOf('\n\n')) >= 0) {
        const raw = this.buffer.slice(0, cut);
        this.buffer = this.buffer.slice(cut + 2);
        const lines = raw.split('\n');
        const data = lines.filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n');
        if (!data) continue; // comments (heartbeats)
        const id = lines.find((l) => l.startsWith('id: '))?.slice(4);
        const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
        this.frames.push({ id, event, data });
      }
      this.wake();
    });
    const done = (): void => {
      this.ended = true;
      this.wake();
    };
    res.on('end', done);
    res.on('close', done);
    res.on('error', done);
  }

  get status(): number {
    return this.res.statusCode ?? 0;
  }

  /** Waits until `predicate` holds over the frames so far (or the stream ends). */
  async until(predicate: (frames: readonly SseFrame[]) => boolean, timeoutMs = 5_000): Promise<readonly SseFrame[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.frames)) {
      if (this.ended) throw new Error(`stream ended before the condition held; got ${this.frames.length} frames`);
      if (Date.now() > deadline) throw new Error(`timed out; got ${this.frames.length} frames: ${this.frames.map((f) => f.event ?? JSON.parse(f.data).kind).join(', ')}`);
      await this.nextChange();
    }
    return this.frames;
  }

  /** Resolves on the next frame or end of stream, or after 50 ms (so deadlines are checked). */
  private nextChange(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 50);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Reads to the end of the stream. */
  async all(timeoutMs = 10_000): Promise<readonly SseFrame[]> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('stream did not end');
      await this.nextChange();
    }
    return this.frames;
  }

  events(): WireRunEvent[] {
    return this.frames.map((f) => JSON.parse(f.data) as WireRunEvent);
  }

  records(): WireRecord[] {
    return this.frames.map((f) => JSON.parse(f.data) as WireRecord);
  }

  close(): void {
    this.destroy();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

/** Opens an SSE request (POST /api/chat or GET /api/inspect) and resolves once headers arrived. */
export function openSse(server: ServerAddress, method: 'GET' | 'POST', path: string, options: RequestOptions = {}): Promise<SseClient> {
  return new Promise((resolve, reject) => {
    const body = options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    const req = httpRequest(`${server.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.token ?? server.token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...options.headers,
      },
    });
    req.on('response', (res) => resolve(new SseClient(res, () => req.destroy())));
    req.on('error', reject);
    req.end(body);
  });
}

/** "type" or "type:callId", skipping text deltas: a compact, readable event order. */
export function trace(events: readonly WireRunEvent[]): string[] {
  return events
    .filter((e) => e.type !== 'text_delta' && e.type !== 'reasoning_delta')
    .map((e) => (e.call ? `${e.type}:${(e.call as { id: string }).id}` : e.type));
}

export async function eventually<T>(fn: () => T | Promise<T>, check: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (check(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${JSON.stringify(value)?.slice(0, 500)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Opens a chat stream for `agent` and records it in `open` (the suite closes those after each test). */
export async function openChat(server: TroupeServer, open: SseClient[], agent: string, input = 'go'): Promise<SseClient> {
  const client = await openSse(server, 'POST', '/api/chat', { body: { agent, input } });
  open.push(client);
  return client;
}
