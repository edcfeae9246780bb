import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';

/** An error that becomes a JSON response `{ error: { code, message } }`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, error.status, { error: { code: error.code, message: error.message } }, error.headers);
}

/** Constant-time bearer token check. */
export function checkBearer(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization;
  if (typeof header !== 'string') return false;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) return false;
  const a = createHash('sha256').update(match[1]!).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}

/** Reads the body as text; 413 past `maxBytes`. */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, 'body_too_large', `Request body exceeds ${maxBytes} bytes.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export type FieldSpec = (
  | { readonly type: 'string'; readonly nonEmpty?: boolean; readonly maxLength?: number }
  | { readonly type: 'enum'; readonly values: readonly string[] }
) & {
  /** The field may be left out (it is then absent from the result). Required by default. */
  readonly optional?: boolean;
};

/**
 * Parses a JSON object body and checks it against `fields` (required unless `optional`).
 * Messages are part of the API: malformed JSON, a non-object, unknown, missing and
 * mistyped fields.
 */
export function parseJsonObject(text: string, req: IncomingMessage, fields: Record<string, FieldSpec>): Record<string, string> {
  const type = req.headers['content-type'];
  // text/plain is what fetch() sends for a string body; forms (urlencoded, multipart) are refused.
  if (type !== undefined && !/^(?:application\/(?:[\w.+-]+\+)?json|text\/plain)\b/i.test(type)) {
    throw new HttpError(415, 'unsupported_media_type', 'Content-Type must be application/json.');
  }
  if (text.trim() === '') throw new HttpError(400, 'empty_body', 'Request body is empty; expected a JSON object.');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'malformed_json', 'Request body is not valid JSON.');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, 'invalid_body', 'Request body must be a JSON object.');
  }
  const allowed = Object.keys(fields);
  const unknown = Object.keys(body).filter((key) => !allowed.includes(key));
  if (unknown.length > 0) {
    const list = unknown.map((key) => `'${key}'`).join(', ');
    throw new HttpError(400, 'unknown_field', `Unknown field${unknown.length > 1 ? 's' : ''} ${list}. Allowed fields: ${allowed.join(', ')}.`);
  }
  const out: Record<string, string> = {};
  for (const [name, spec] of Object.entries(fields)) {
    const value = (body as Record<string, unknown>)[name];
    if (value === undefined) {
      if (spec.optional) continue;
      throw new HttpError(400, 'missing_field', `Missing field '${name}'.`);
    }
    if (spec.type === 'enum') {
      if (typeof value !== 'string' || !spec.values.includes(value)) {
        throw new HttpError(400, 'invalid_field', `Field '${name}' must be ${spec.values.map((v) => JSON.stringify(v)).join(' or ')}.`);
      }
    } else {
      if (typeof value !== 'string') throw new HttpError(400, 'invalid_field', `Field '${name}' must be a string.`);
      if (spec.nonEmpty && value.length === 0) throw new HttpError(400, 'invalid_field', `Field '${name}' must not be empty.`);
      if (spec.maxLength !== undefined && value.length > spec.maxLength) {
        throw new HttpError(400, 'invalid_field', `Field '${name}' is longer than ${spec.maxLength} characters.`);
      }
    }
    out[name] = value;
  }
  return out;
}

/** Past this much unsent data a stream client is too slow: it is disconnected (it may resume with Last-Event-ID). */
const MAX_SSE_BACKLOG = 8 * 1024 * 1024;
const HEARTBEAT_MS = 15_000;

/** A server-sent-events response. */
export class SseStream {
  private closed = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly closeHandlers: Array<() => void> = [];

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string> = {},
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    res.flushHeaders();
    res.socket?.setNoDelay(true);
    this.heartbeat = setInterval(() => this.comment('ping'), HEARTBEAT_MS);
    this.heartbeat.unref();
    res.on('close', () => this.cleanup());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  onClose(handler: () => void): void {
    if (this.closed) handler();
    else this.closeHandlers.push(handler);
  }

  send(data: string, options: { event?: string; id?: string | number } = {}): void {
    if (this.closed) return;
    let frame = '';
    if (options.id !== undefined) frame += `id: ${options.id}\n`;
    if (options.event) frame += `event: ${options.event}\n`;
    frame += `data: ${data}\n\n`;
    this.res.write(frame);
    if (this.res.writableLength > MAX_SSE_BACKLOG) this.res.destroy();
  }

  comment(text: string): void {
    if (!this.closed) this.res.write(`: ${text}\n\n`);
  }

  end(): void {
    if (this.closed) return;
    this.res.end();
    this.cleanup();
  }

  private cleanup(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    for (const handler of this.closeHandlers.splice(0)) {
      try {
        handler();
      } catch {
        // ignore
      }
    }
  }
}
