import type { RunEvent } from '../types.js';
import { readSse } from '../inspect/sse.js';
import { startDemoServer } from '../server/demo.js';
import type { TroupeServer } from '../server/server.js';
import { describe, indent } from './demo.js';

export interface StartOptions {
  readonly port?: number;
  /**
   * Undecided approvals are denied after this long (default 120,000 ms). The server holds the
   * deadline; the terminal prints the same deadline the page counts down to.
   */
  readonly approvalTimeoutMs?: number;
  /**
   * When to start the demo run: `page` (default) once an inspector page is connected (or a
   * key is pressed when stdin is a terminal), `none` at once.
   */
  readonly wait?: 'page' | 'none';
  readonly out?: (line: string) => void;
  /** Keys typed in the terminal (default: stdin when it is a TTY): Enter starts, `a`/`d` approve or deny. */
  readonly keys?: NodeJS.ReadStream | undefined;
}

const DEMO_INPUT = 'Plan a weekend in Paris or Rome and book the hotel.';

/**
 * `npm start`: the demo server with the live inspector, plus one demo run started through
 * the HTTP API and printed here as it streams. It waits for the page to connect first (so
 * the 200 ms parallel phase is seen live). The hotel booking waits for an approval: Approve
 * or Deny in the page (or `a`/`d` here); undecided, the server denies it at the deadline
 * both the page and this terminal show. Resolves when the run has ended; the server keeps serving.
 */
export async function startDemo(options: StartOptions = {}): Promise<TroupeServer> {
  const out = options.out ?? console.log;
  const approvalTimeoutMs = options.approvalTimeoutMs ?? 120_000;
  const server = await startDemoServer({ port: options.port ?? 4317, approvalTimeoutMs, out });
  const keys = options.keys === undefined ? (process.stdin.isTTY ? process.stdin : undefined) : options.keys;
  const api = (method: 'GET' | 'POST', path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
  if ((options.wait ?? 'page') === 'page') {
    out(`\nwaiting for the inspector page: open the inspector URL above${keys ? ', or press Enter to start without it' : ''} (--no-wait starts at once) …`);
    await waitForPage(server, keys);
    out('starting the demo run through POST /api/chat …\n');
  } else {
    out(`\nopen the inspector URL above to watch. Starting a demo run through POST /api/chat …\n`);
  }
  const response = await api('POST', '/api/chat', { agent: 'demo', input: DEMO_INPUT });
  if (!response.ok || !response.body) throw new Error(`starting the demo run failed: HTTP ${response.status} ${await response.text()}`);
  const runId = response.headers.get('x-run-id') ?? '';
  let stopKeys: (() => void) | undefined;
  await readSse(response.body, (data) => {
    const event = JSON.parse(data) as RunEvent;
    const line = event.type === 'text_delta' ? undefined : describe(event);
    if (line) out(`${indent(event)}  ${line}`);
    if (event.type === 'approval_required') {
      const { approvalId } = event;
      void deadlineOf(api, runId, approvalId).then((deadline) => {
        const when = deadline === undefined ? 'no deadline' : `denied automatically at ${new Date(deadline).toLocaleTimeString()} (in ${Math.round((deadline - Date.now()) / 1000)} s) if undecided`;
        out(`${indent(event)}  ? ${event.call.name} needs an approval: Approve or Deny in the inspector${keys ? ', or press a / d here' : ''}; ${when}`);
      });
      if (keys) {
        stopKeys?.();
        stopKeys = onKey(keys, (key) => {
          if (key !== 'a' && key !== 'd') return false;
          const decision = key === 'a' ? 'approve' : 'deny';
          void api('POST', '/api/chat/approve', { runId, approvalId, decision }).then((r) => out(r.status === 200 ? `  (${decision === 'approve' ? 'approved' : 'denied'} ${event.call.id} from the terminal)` : `  (${event.call.id} was already decided)`));
          return true;
        });
      }
    }
    if (event.type === 'run_completed' && event.path.length === 1) out(`\noutput: ${event.output}`);
  });
  stopKeys?.();
  out(`\nthe server keeps running (inspector: ${server.inspectorUrl}); press Ctrl+C to stop.`);
  return server;
}

async function deadlineOf(api: (method: 'GET', path: string) => Promise<Response>, runId: string, approvalId: string): Promise<number | undefined> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await api('GET', `/api/runs/${encodeURIComponent(runId)}`);
    const body = (await res.json()) as { pendingApprovals?: Array<{ approvalId: string; deadline?: number }> };
    const found = body.pendingApprovals?.find((p) => p.approvalId === approvalId);
    if (found) return found.deadline;
    await new Promise((r) => setTimeout(r, 25));
  }
  return undefined;
}

/** Resolves once an inspector page is connected to the feed, or Enter is pressed on `keys`. */
function waitForPage(server: TroupeServer, keys: NodeJS.ReadStream | undefined): Promise<void> {
  return new Promise((resolve) => {
    let stop: (() => void) | undefined;
    const timer = setInterval(() => {
      if (server.stats().inspectorClients > 0) done();
    }, 100);
    const done = (): void => {
      clearInterval(timer);
      stop?.();
      resolve();
    };
    if (keys) stop = onKey(keys, (key) => key === '\r' || key === '\n' || key === ' ' ? (done(), true) : false);
  });
}

/** Reads single keys from a TTY until `handler` returns true (or the returned stop is called). Ctrl+C still exits. */
function onKey(keys: NodeJS.ReadStream, handler: (key: string) => boolean): () => void {
  const raw = typeof keys.setRawMode === 'function';
  if (raw) keys.setRawMode(true);
  keys.resume();
  const listener = (chunk: Buffer | string): void => {
    const key = chunk.toString();
    if (key === '\u0003') process.kill(process.pid, 'SIGINT');
    if (handler(key)) stop();
  };
  const stop = (): void => {
    keys.off('data', listener);
    if (raw) keys.setRawMode(false);
    keys.pause();
  };
  keys.on('data', listener);
  return stop;
}
