import type { ChartCoverageInput } from '../../src/inspect/coverage-view.js';
import { readSse } from '../../src/inspect/sse.js';
import type { AgentGraph, WireError, WireRecord, WireRunEvent } from '../../src/inspect/wire.js';
import type { WireEntry } from '../../src/inspect/replay.js';
import type { RunStatus } from '../../src/run-status.js';

/** A row of GET /api/runs (live or stored). */
export interface RunRow {
  readonly runId: string;
  readonly source: 'live' | 'stored';
  readonly agent: string;
  readonly input: string | undefined;
  readonly status: RunStatus;
  readonly startedAt: number;
  readonly endedAt: number | undefined;
  readonly durationMs: number | undefined;
  readonly usage: { inputTokens: number; outputTokens: number; totalTokens: number; requests: number } | undefined;
  readonly turns: number | undefined;
  readonly output: string | undefined;
  readonly error: WireError | undefined;
}

/** GET /api/runs/:id, the fields the page reads. */
export interface RunDetail extends RunRow {
  readonly budget?: Record<string, number>;
  readonly eventLog: WireRunEvent[];
  readonly log?: {
    readonly head: { agent: string; status: RunStatus; turn: number; output?: string; error?: { name: string; message: string } };
    readonly entries: WireEntry[];
    readonly unknownEntries: number;
    readonly restoreError?: string;
  };
}

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

/** The server API, authenticated with the bearer token. */
export class Api {
  constructor(private token: string) {}

  setToken(token: string): void {
    this.token = token;
  }

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' };
  }

  async json<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const res = await fetch(path, { method, headers: this.headers(), ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const payload = (await res.json().catch(() => ({}))) as { error?: { code: string; message: string } };
    if (!res.ok) throw new ApiError(res.status, payload.error?.code ?? 'http_error', payload.error?.message ?? `HTTP ${res.status}`);
    return payload as T;
  }

  agents(): Promise<{ agents: string[] }> {
    return this.json('GET', 'api/agents');
  }

  /** Decides one waiting call by its approval id (call ids are not unique across sub-runs). */
  decide(runId: string, approvalId: string, decision: 'approve' | 'deny'): Promise<unknown> {
    return this.json('POST', 'api/chat/approve', { runId, approvalId, decision });
  }

  runs(status: string, q: string): Promise<{ runs: RunRow[] }> {
    const params = new URLSearchParams();
    if (status) params.set('status', status);
    if (q) params.set('q', q);
    const query = params.toString();
    return this.json('GET', `api/runs${query ? `?${query}` : ''}`);
  }

  run(runId: string): Promise<RunDetail> {
    return this.json('GET', `api/runs/${encodeURIComponent(runId)}`);
  }

  /** GET /api/coverage: the server's coverage report (`coverage: null` when it has none). */
  coverage(): Promise<{ coverage: ChartCoverageInput | null; from: string | null }> {
    return this.json('GET', 'api/coverage');
  }

  graph(agent: string): Promise<{ agent: string; graph: AgentGraph }> {
    return this.json('GET', `api/agents/${encodeURIComponent(agent)}/graph`);
  }

  /** POST /api/runs/:id/resume (a 404 means this server cannot resume runs). */
  resume(runId: string): Promise<unknown> {
    return this.json('POST', `api/runs/${encodeURIComponent(runId)}/resume`, {});
  }

  cancel(runId: string): Promise<unknown> {
    return this.json('POST', 'api/chat/cancel', { runId });
  }

  /**
   * Starts a run; resolves with its id once the stream opened. The page watches runs
   * through the inspector feed, so the chat stream is read to its end and dropped.
   */
  async startRun(agent: string, input: string): Promise<string> {
    const res = await fetch('api/chat', { method: 'POST', headers: this.headers(), body: JSON.stringify({ agent, input }) });
    if (!res.ok) {
      const payload = (await res.json().catch(() => ({}))) as { error?: { code: string; message: string } };
      throw new ApiError(res.status, payload.error?.code ?? 'http_error', payload.error?.message ?? `HTTP ${res.status}`);
    }
    const runId = res.headers.get('x-run-id') ?? '';
    void drain(res.body);
    return runId;
  }

  /** Follows GET /api/inspect (fetch, so the token travels in a header), reconnecting with Last-Event-ID. */
  follow(onRecord: (record: WireRecord) => void, onState: (state: 'open' | 'retrying' | 'unauthorized', detail?: string) => void, lastSeq: () => number): () => void {
    let stopped = false;
    let controller: AbortController | undefined;
    let delay = 500;
    const loop = async (): Promise<void> => {
      while (!stopped) {
        controller = new AbortController();
        try {
          const seq = lastSeq();
          const res = await fetch('api/inspect', {
            headers: { authorization: `Bearer ${this.token}`, ...(seq > 0 ? { 'last-event-id': String(seq) } : {}) },
            signal: controller.signal,
          });
          if (res.status === 401) {
            onState('unauthorized');
            return;
          }
          if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
          onState('open');
          delay = 500;
          await readSse(res.body, (data) => onRecord(JSON.parse(data) as WireRecord));
        } catch (error) {
          if (stopped) return;
          onState('retrying', (error as Error).message);
        }
        if (stopped) return;
        onState('retrying');
        await new Promise((r) => setTimeout(r, delay));
        delay = Math.min(delay * 2, 5_000);
      }
    };
    void loop();
    return () => {
      stopped = true;
      controller?.abort();
    };
  }
}

async function drain(body: ReadableStream<Uint8Array> | null): Promise<void> {
  if (!body) return;
  const reader = body.getReader();
  try {
    while (!(await reader.read()).done) {
      // discard
    }
  } catch {
    // the run goes on server-side even if this stream breaks
  }
}

