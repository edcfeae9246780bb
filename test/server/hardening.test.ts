import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { serve } from '../../src/cli/serve.js';
import { createServer, type ServerOptions, type TroupeServer } from '../../src/server/index.js';
import { allowedHostSet, hostAllowed, timeoutSettings } from '../../src/server/http.js';
import type { Deferred } from '../helpers.js';
import { calcAgent, slowAgentFactory } from './agents.js';
import { call, openSse, type SseClient } from './helpers.js';

const servers: TroupeServer[] = [];
const clients: SseClient[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.close();
  for (const socket of sockets.splice(0)) socket.destroy();
  for (const server of servers.splice(0)) await server.close();
});

async function start(options: Partial<ServerOptions> = {}, gates: Array<Deferred<void>> = []): Promise<TroupeServer> {
  const server = await createServer({ agents: { calc: calcAgent, slow: slowAgentFactory(gates) }, inspect: 'off', ...options });
  servers.push(server);
  return server;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly json: any;
}

/**
 * A raw client: writes `head`, then `drip` one piece every `everyMs` until the server
 * answers; resolves with the response once the server has closed the connection.
 */
function rawRequest(server: TroupeServer, head: string, drip: readonly string[] = [], everyMs = 20): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(server.port, server.host);
    sockets.push(socket);
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      socket.write(head);
      let next = 0;
      timer = setInterval(() => {
        if (next < drip.length && !socket.destroyed && received === '') socket.write(drip[next++]!);
      }, everyMs);
    });
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      const [top, body = ''] = received.split('\r\n\r\n');
      const [statusLine, ...lines] = (top ?? '').split('\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(statusLine ?? '')?.[1]);
      if (!status) return reject(new Error(`no HTTP response: ${JSON.stringify(received)}`));
      const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status, headers, json: JSON.parse(body) });
    });
  });
}

const hostError = (host: string) => ({ error: { code: 'host_not_allowed', message: expect.stringContaining(`Host ${JSON.stringify(host)} is not allowed.`) } });

describe('Host header (DNS-rebinding defence)', () => {
  it('answers a foreign Host with 403 host_not_allowed on every route, before the token is checked', async () => {
    const server = await start();
    const evil = { host: `evil.example:${server.port}` };
    for (const [method, path, token] of [
      ['GET', '/api/agents', undefined],
      ['GET', '/api/agents', null],
      ['GET', '/api/runs', undefined],
      ['GET', '/', undefined],
      ['GET', '/assets/app.js', undefined],
      ['HEAD', '/', undefined],
      ['GET', '/api/inspect', undefined],
      ['POST', '/api/chat', undefined],
    ] as const) {
      const res = await call(server, method, path, { headers: evil, token, ...(method === 'POST' ? { body: { agent: 'calc', input: 'x' } } : {}) });
      expect([method, path, res.status]).toEqual([method, path, 403]);
      if (method !== 'HEAD') expect(res.json).toEqual(hostError(evil.host));
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    }
    // The refused chat started no run.
    expect((await call(server, 'GET', '/api/runs')).json).toEqual({ runs: [] });
  });

  it('refuses the SSE routes with a JSON 403 instead of a stream', async () => {
    const server = await start();
    const inspect = await openSse(server, 'GET', '/api/inspect', { headers: { host: 'rebound.example' } });
    clients.push(inspect);
    expect(inspect.status).toBe(403);
    expect(inspect.res.headers['content-type']).toBe('application/json; charset=utf-8');
    const chat = await openSse(server, 'POST', '/api/chat', { body: { agent: 'calc', input: 'x' }, headers: { host: 'rebound.example' } });
    clients.push(chat);
    expect(chat.status).toBe(403);
  });

  it('accepts the loopback names with or without a port, in any case', async () => {
    const server = await start();
    for (const host of ['localhost', `localhost:${server.port}`, 'LOCALHOST:1', '127.0.0.1', `127.0.0.1:${server.port}`, '[::1]', `[::1]:${server.port}`]) {
      const res = await call(server, 'GET', '/api/agents', { headers: { host } });
      expect([host, res.status, res.json]).toEqual([host, 200, { agents: ['calc', 'slow'] }]);
    }
  });

  it('refuses look-alikes, malformed values and a missing Host', async () => {
    const server = await start();
    for (const host of ['localhost.evil.example', 'evil.localhost', '127.0.0.1.nip.io', '127.0.0.2', '[::2]', 'localhost:99999x', 'local host', 'localhost/x']) {
      const res = await call(server, 'GET', '/api/agents', { headers: { host } });
      expect([host, res.status, res.json?.error?.code]).toEqual([host, 403, 'host_not_allowed']);
    }
    // HTTP/1.0 may leave Host out; Node requires it for HTTP/1.1.
    const res = await rawRequest(server, `GET /api/agents HTTP/1.0\r\nAuthorization: Bearer ${server.token}\r\n\r\n`);
    expect(res.status).toBe(403);
    expect(res.json).toEqual(hostError(''));
  });

  it('accepts names given in allowedHosts (a bare name on any port, name:port on that port only)', async () => {
    const server = await start({ allowedHosts: ['Troupe.Internal', 'box:8080', '10.0.0.7'] });
    const status = async (host: string): Promise<number> => (await call(server, 'GET', '/api/agents', { headers: { host } })).status;
    expect(await status('troupe.internal')).toBe(200);
    expect(await status('troupe.internal:9999')).toBe(200);
    expect(await status('box:8080')).toBe(200);
    expect(await status('box:8081')).toBe(403);
    expect(await status('box')).toBe(403);
    expect(await status('10.0.0.7:4317')).toBe(200);
    expect(await status('sub.troupe.internal')).toBe(403);
  });

  it('takes --allowed-host (repeatable) in troupe serve', async () => {
    const server = await serve(['--port', '0', '--db', 'off', '--inspect', 'off', '--allowed-host', 'a.test', '--allowed-host', 'b.test:81'], () => undefined);
    servers.push(server);
    expect((await call(server, 'GET', '/api/agents', { headers: { host: 'a.test:4317' } })).status).toBe(200);
    expect((await call(server, 'GET', '/api/agents', { headers: { host: 'b.test:81' } })).status).toBe(200);
    expect((await call(server, 'GET', '/api/agents', { headers: { host: 'c.test' } })).status).toBe(403);
  });

  it('builds the allowed set from the loopback names, the bound address and the extras', () => {
    expect([...allowedHostSet('127.0.0.1')]).toEqual(['localhost', '127.0.0.1', '[::1]']);
    expect([...allowedHostSet('0.0.0.0')]).toEqual(['localhost', '127.0.0.1', '[::1]', '0.0.0.0']);
    expect([...allowedHostSet('::')]).toEqual(['localhost', '127.0.0.1', '[::1]', '[::]']);
    expect([...allowedHostSet('192.168.1.5', ['::1', 'Example.COM:0443'])]).toEqual(['localhost', '127.0.0.1', '[::1]', '192.168.1.5', 'example.com:443']);
    expect(() => allowedHostSet('127.0.0.1', ['http://example.com'])).toThrow("allowedHosts: 'http://example.com' is not a host name, an IP address or name:port");
    expect(hostAllowed(undefined, allowedHostSet('127.0.0.1'))).toBe(false);
    expect(hostAllowed('[::1]:80', allowedHostSet('127.0.0.1'))).toBe(true);
  });
});

describe('request timeouts', () => {
  it('defaults to 30 s for the whole request and for the headers, checked every second', async () => {
    const server = await start();
    expect([server.http.requestTimeout, server.http.headersTimeout]).toEqual([30_000, 30_000]);
    expect(timeoutSettings()).toEqual({ requestTimeout: 30_000, headersTimeout: 30_000, connectionsCheckingInterval: 1_000 });
    expect(timeoutSettings(200)).toEqual({ requestTimeout: 200, headersTimeout: 200, connectionsCheckingInterval: 50 });
    expect(timeoutSettings(0)).toEqual({ requestTimeout: 0, headersTimeout: 30_000, connectionsCheckingInterval: 1_000 });
    expect(() => timeoutSettings(100, 200)).toThrow('headersTimeoutMs (200) must not exceed requestTimeoutMs (100)');
    expect(() => timeoutSettings(-1)).toThrow('requestTimeoutMs must be a non-negative integer, got -1');
    await expect(serve(['--request-timeout', 'soon'])).rejects.toThrow(/--request-timeout must be a non-negative integer of ms/);
  });

  it('answers a body dribbled past requestTimeoutMs with 408 request_timeout and closes; no run starts', async () => {
    const server = await start({ requestTimeoutMs: 150 });
    const body = JSON.stringify({ agent: 'calc', input: 'add' });
    const head =
      `POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nAuthorization: Bearer ${server.token}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    // One byte every 20 ms would need ~700 ms: far past the limit.
    const res = await rawRequest(server, head, [...body]);
    expect(res.status).toBe(408);
    expect(res.headers).toMatchObject({ 'content-type': 'application/json; charset=utf-8', connection: 'close' });
    expect(res.json).toEqual({ error: { code: 'request_timeout', message: 'The request (headers and body) did not arrive in time.' } });
    expect((await call(server, 'GET', '/api/runs')).json).toEqual({ runs: [] });
  });

  it('answers headers dribbled past headersTimeoutMs with 408 request_timeout', async () => {
    const server = await start({ requestTimeoutMs: 150 });
    const lines = Array.from({ length: 40 }, (_, i) => `X-Slow-${i}: ${i}\r\n`);
    const res = await rawRequest(server, `GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1\r\n`, lines);
    expect(res.status).toBe(408);
    expect(res.json.error.code).toBe('request_timeout');
  });

  it('answers oversized headers with 431 headers_too_large and unparsable requests with 400 bad_request', async () => {
    const server = await start();
    const big = await rawRequest(server, `GET /api/agents HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect([big.status, big.json]).toEqual([431, { error: { code: 'headers_too_large', message: 'Request headers are too large.' } }]);
    const junk = await rawRequest(server, 'NOT HTTP AT ALL\r\n\r\n');
    expect([junk.status, junk.json]).toEqual([400, { error: { code: 'bad_request', message: 'Malformed HTTP request.' } }]);
  });

  it('serves a request that arrives in time, also on a server with tiny timeouts', async () => {
    const server = await start({ requestTimeoutMs: 150 });
    const sse = await openSse(server, 'POST', '/api/chat', { body: { agent: 'calc', input: 'add' } });
    clients.push(sse);
    expect((await sse.all()).at(-1)!.event).toBe('run_completed');
  });

  it('does not cut long-lived SSE responses: the request was read, only the response goes on', async () => {
    const gates: Array<Deferred<void>> = [];
    const server = await start({ requestTimeoutMs: 100, inspect: 'always' }, gates);
    const chat = await openSse(server, 'POST', '/api/chat', { body: { agent: 'slow', input: 'wait' } });
    const inspector = await openSse(server, 'GET', '/api/inspect');
    clients.push(chat, inspector);
    await chat.until((frames) => frames.some((f) => f.event === 'tool_call_started'));
    // Six times the request timeout: some twenty sweeps of Node's connection check (every 25 ms).
    await sleep(600);
    expect([chat.ended, inspector.ended]).toEqual([false, false]);
    gates[0]!.resolve();
    const frames = await chat.all();
    expect(frames.at(-1)!.event).toBe('run_completed');
    await inspector.until((records) => records.some((r) => JSON.parse(r.data).kind === 'run' && JSON.parse(r.data).status === 'completed'));
    expect(inspector.ended).toBe(false);
  });
});
