import type { ServerResponse } from 'node:http';
import { HttpError, SseStream, sendJson } from './http.js';
import type { RunRegistry } from './run-registry.js';
import { resumeRoute, type RecoveryHost } from './run-recovery.js';

const RUN_ACTION = /^\/api\/runs\/([^/]+)\/(resume|stream)$/;

function decodeRunId(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, 'invalid_run_id', 'Run id is not valid URL encoding.');
  }
}

/**
 * `POST /api/runs/:id/resume` (continue a stored run here) and `GET /api/runs/:id/stream`
 * (reattach to a run of this server: the events kept so far, then live ones until it ends).
 * Returns false when `pathname` is neither.
 */
export async function serveRunAction(
  pathname: string,
  method: string,
  res: ServerResponse,
  ctx: { registry: RunRegistry; recovery: RecoveryHost | undefined; streams: Set<SseStream> },
): Promise<boolean> {
  const match = RUN_ACTION.exec(pathname);
  if (!match) return false;
  const id = decodeRunId(match[1]!);
  if (match[2] === 'resume') {
    if (method !== 'POST') throw new HttpError(405, 'method_not_allowed', `Method ${method} is not allowed on ${pathname}.`, { allow: 'POST' });
    const { status, body } = await resumeRoute(ctx.recovery, id);
    sendJson(res, status, body);
    return true;
  }
  if (method !== 'GET') throw new HttpError(405, 'method_not_allowed', `Method ${method} is not allowed on ${pathname}.`, { allow: 'GET' });
  const run = ctx.registry.get(id);
  if (!run) throw new HttpError(404, 'run_not_found', `Run '${id}' is not running on this server${ctx.recovery ? ' (POST /api/runs/:id/resume continues a stored run)' : ''}.`);
  const sse = new SseStream(res, { 'x-run-id': run.id });
  ctx.streams.add(sse);
  const unsubscribe = run.subscribe({ event: (event, index) => sse.send(JSON.stringify(event), { event: event.type, id: index }), end: () => sse.end() });
  sse.onClose(() => {
    unsubscribe();
    ctx.streams.delete(sse);
  });
  return true;
}
