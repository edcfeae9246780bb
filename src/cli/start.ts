import type { RunEvent } from '../types.js';
import { readSse } from '../inspect/sse.js';
import { startDemoServer } from '../server/demo.js';
import type { TroupeServer } from '../server/server.js';
import { describe, indent } from './demo.js';

export interface StartOptions {
  readonly port?: number;
  /** Approve the demo's gated booking through the API if nobody clicked Approve by then. */
  readonly autoApproveMs?: number;
  readonly out?: (line: string) => void;
}

/**
 * `npm start`: the demo server with the live inspector, plus one demo run started through
 * the HTTP API and printed here as it streams. The hotel booking waits for an approval:
 * click Approve in the inspector, or it is approved through the API after `autoApproveMs`.
 * Resolves when the run has ended; the server keeps serving.
 */
export async function startDemo(options: StartOptions = {}): Promise<TroupeServer> {
  const out = options.out ?? console.log;
  const server = await startDemoServer({ port: options.port ?? 4317, out });
  const autoApproveMs = options.autoApproveMs ?? 45_000;
  out(`\nopen the inspector URL above to watch. Starting a demo run through POST /api/chat …\n`);
  const api = (path: string, body: unknown) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const response = await api('/api/chat', { agent: 'demo', input: 'Plan a weekend in Paris or Rome and book the hotel.' });
  if (!response.ok || !response.body) throw new Error(`starting the demo run failed: HTTP ${response.status} ${await response.text()}`);
  const runId = response.headers.get('x-run-id') ?? '';
  const timers: NodeJS.Timeout[] = [];
  await readSse(response.body, (data) => {
    const event = JSON.parse(data) as RunEvent;
    const line = event.type === 'text_delta' ? undefined : describe(event);
    if (line) out(`${indent(event)}  ${line}`);
    if (event.type === 'approval_required') {
      out(`${indent(event)}  ? ${event.call.name} needs an approval: click Approve in the inspector (approving through the API in ${Math.round(autoApproveMs / 1000)} s otherwise)`);
      const callId = event.call.id;
      timers.push(setTimeout(() => void api('/api/chat/approve', { runId, callId, decision: 'approve' }).then((r) => r.status === 200 && out(`  (approved ${callId} through the API)`)), autoApproveMs));
    }
    if (event.type === 'run_completed' && event.path.length === 1) out(`\noutput: ${event.output}`);
  });
  timers.forEach(clearTimeout);
  out(`\nthe server keeps running (inspector: ${server.inspectorUrl}); press Ctrl+C to stop.`);
  return server;
}
