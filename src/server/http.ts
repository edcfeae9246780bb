import type { IncomingMessage, ServerResponse } from 'node:http';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Duplex } from 'node:stream';

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
  // The connection is gone (e.g. closed by the request timeout): nobody to answer.
  if (res.destroyed || res.writableEnded) return;
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

/** Host names every server accepts (any port): the loopback names a local client uses. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(\d{1,5}))?$/;

/**
 * Normalises a `Host` header value or an allowed-host entry to `name` or `name:port`
 * (lower case; a bare IPv6 address gets brackets). Undefined when it is not a host.
 */
export function normaliseHost(value: string): string | undefined {
  let text = value.trim().toLowerCase();
  if (text.includes(':') && !text.startsWith('[') && /^[0-9a-f:.]+$/.test(text) && text.split(':').length > 2) text = `[${text}]`;
  const match = HOST_HEADER.exec(text);
  if (!match || Number(match[2] ?? 0) > 65_535) return undefined;
  return match[2] === undefined ? match[1]! : `${match[1]}:${Number(match[2])}`;
}

/**
 * DNS-rebinding defence: whether the request's `Host` header names this server. `allowed`
 * holds normalised entries (`normaliseHost`): a bare name matches it on any port, `name:port`
 * only on that port. A missing or malformed header is never allowed.
 */
export function hostAllowed(header: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (header === undefined) return false;
  const host = normaliseHost(header);
  if (host === undefined) return false;
  if (allowed.has(host)) return true;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
  return allowed.has(name);
}

/**
 * The names `hostAllowed` accepts: the loopback names, the address the server binds to
 * (the one in `server.url`), and `extra` (`allowedHosts`).
 * @throws Error when an entry is not a host name, an IP address or `name:port`.
 */
export function allowedHostSet(bindHost: string, extra: readonly string[] = []): Set<string> {
  const set = new Set(LOOPBACK_HOSTS);
  const bound = normaliseHost(bindHost);
  // Also a wildcard (0.0.0.0): `server.url` names it. An IP literal cannot be rebound.
  if (bound !== undefined) set.add(bound);
  for (const entry of extra) {
    const host = typeof entry === 'string' ? normaliseHost(entry) : undefined;
    if (host === undefined) throw new Error(`allowedHosts: '${String(entry)}' is not a host name, an IP address or name:port`);
    set.add(host);
  }
  return set;
}

export interface TimeoutSettings {
  readonly requestTimeout: number;
  readonly headersTimeout: number;
  readonly connectionsCheckingInterval: number;
}

/**
 * node:http timeouts from `requestTimeoutMs` (whole request, headers and body; default
 * 30 s; 0 = none) and `headersTimeoutMs` (default 30 s, at most the request timeout).
 * Node checks them every `connectionsCheckingInterval`: a quarter of the shorter one, 10 ms
 * to 1 s. Both end when the request has been read, so a long response (SSE) is not cut.
 * @throws Error on a negative or non-integer value, or headers allowed longer than the request.
 */
export function timeoutSettings(requestTimeoutMs = 30_000, headersTimeoutMs?: number): TimeoutSettings {
  if (!(Number.isInteger(requestTimeoutMs) && requestTimeoutMs >= 0)) throw new Error(`requestTimeoutMs must be a non-negative integer, got ${requestTimeoutMs}`);
  const headersTimeout = headersTimeoutMs ?? (requestTimeoutMs === 0 ? 30_000 : Math.min(30_000, requestTimeoutMs));
  if (!(Number.isInteger(headersTimeout) && headersTimeout >= 0)) throw new Error(`headersTimeoutMs must be a non-negative integer, got ${headersTimeout}`);
  if (requestTimeoutMs > 0 && headersTimeout > requestTimeoutMs) throw new Error(`headersTimeoutMs (${headersTimeout}) must not exceed requestTimeoutMs (${requestTimeoutMs})`);
  const shortest = Math.min(...[requestTimeoutMs, headersTimeout].filter((ms) => ms > 0), 4_000);
  return { requestTimeout: requestTimeoutMs, headersTimeout, connectionsCheckingInterval: Math.max(10, Math.floor(shortest / 4)) };
}

const CLIENT_ERRORS: Record<string, [number, string, string, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', 'request_timeout', 'The request (headers and body) did not arrive in time.'],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', 'headers_too_large', 'Request headers are too large.'],
};

/**
 * The `clientError` handler: a request that timed out (`requestTimeout`/`headersTimeout`)
 * gets `408 {error:{code:'request_timeout'}}`, oversized headers 431, anything else Node's
 * parser rejects 400 `bad_request`; the connection is then closed. Nothing is written once
 * a response has started on that connection.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || pending?.headersSent) {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'Bad Request', 'bad_request', 'Malformed HTTP request.'];
  const body = JSON.stringify({ error: { code, message } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    // Closed once flushed, also when the client keeps its half of the connection open.
    () => socket.destroy(),
  );
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
  /** Any JSON value: only its presence is checked here, and the caller reads it from the parsed body. */
  | { readonly type: 'json' }
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
  return checkFields(parseJsonBody(text, req), fields);
}

/**
 * A request body as a JSON object: the content type, an empty body, malformed JSON and a
 * non-object are 4xx HttpErrors (415 unsupported_media_type, 400 empty_body, malformed_json, invalid_body).
 */
export function parseJsonBody(text: string, req: IncomingMessage): Record<string, unknown> {
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
  return body as Record<string, unknown>;
}

/** Checks a parsed body against `fields` (unknown, missing and mistyped fields are 400s). */
export function checkFields(body: Record<string, unknown>, fields: Record<string, FieldSpec>): Record<string, string> {
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
    if (spec.type === 'json') continue;
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
