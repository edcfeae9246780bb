/**
 * `POST /api/chat?protocol=ui` when workers run the runs (`troupe serve --workers external`):
 * the run is enqueued for the workers, and its AI SDK UI message stream is built on this node
 * from the events the worker publishes, by the same mapper as a run this server runs itself,
 * so a `useChat` client gets the same chunks either way.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nanoid } from 'nanoid';
import { HttpError, SseStream, readBody } from './http.js';
import type { RemoteStreams } from './remote-streams.js';
import { parseUIChatRequest } from './ui-chat.js';
import { UIMessageChunkMapper, type UIMessageChunk } from './ui-chunks.js';
import { UI_MESSAGE_STREAM_HEADERS } from './ui-stream.js';
import type { RunJob } from '../store/postgres-queue.js';

/** What the route needs of a server node in a cluster. */
export interface RemoteUIChatContext {
  readonly enqueue: (job: RunJob) => Promise<void>;
  readonly streams: RemoteStreams;
  /** Open streams, ended by `server.close()`. */
  readonly sse: Set<SseStream>;
  readonly agentNames: readonly string[];
  readonly maxBodyBytes: number;
  readonly maxInputChars: number;
  readonly isClosing: () => boolean;
}

/** The 404 for an agent this node does not have (the same text as a run this server starts itself). */
export function unknownAgent(name: string, agentNames: readonly string[]): HttpError {
  return new HttpError(404, 'unknown_agent', `Unknown agent '${name}'. Registered agents: ${agentNames.join(', ') || '(none)'}.`);
}

/**
 * Enqueues the run and answers with its UI message stream (`x-vercel-ai-ui-message-stream:
 * v1`, `X-Run-Id`, `data: <chunk>` frames, then `data: [DONE]`). Body rules and errors as
 * `serveUIChat` (`parseUIChatRequest`; another `protocol` is `400 invalid_protocol`).
 *
 * Differences a client can see, both from where the run lives:
 * - A run parked at a wait (`--suspend-approvals`) does not end the message: a
 *   `data-troupe-event` part shows `run_suspended`, and the stream goes on when a worker
 *   resumes the run after the decision, to the run's terminal event.
 * - The worker's run holds at one approval at a time, like the server's own; a call that
 *   starts waiting behind it is shown when the run reaches its `approval_required` (the run
 *   detail's `pendingApprovals` lists every waiting call at once).
 * Closing the response ends only this stream; the run goes on on its worker.
 */
export async function serveRemoteUIChat(req: IncomingMessage, res: ServerResponse, url: URL, ctx: RemoteUIChatContext): Promise<void> {
  const protocol = url.searchParams.get('protocol');
  if (protocol !== 'ui') throw new HttpError(400, 'invalid_protocol', `Unknown protocol '${protocol ?? ''}'. Supported: ui (AI SDK UI message stream).`);
  const request = parseUIChatRequest(await readBody(req, ctx.maxBodyBytes), req, { maxInputChars: ctx.maxInputChars, agentNames: ctx.agentNames, queryAgent: url.searchParams.get('agent') ?? undefined });
  if (ctx.isClosing()) throw new HttpError(503, 'closing', 'The server is shutting down.');
  if (!ctx.agentNames.includes(request.agent)) throw unknownAgent(request.agent, ctx.agentNames);
  const runId = `run_${nanoid(12)}`;
  // Attachments go as the run's one user message with its content parts (the worker starts from messages).
  const input: RunJob['input'] = request.parts ? [{ role: 'user', content: [...request.parts] }] : request.input;
  await ctx.enqueue({ runId, agent: request.agent, input });
  streamUIMessages(res, runId, ctx);
}

/**
 * `GET /api/runs/:id/stream?protocol=ui` with workers: the run's UI message stream from its
 * first event (a client that reconnects, e.g. `useChat` with `resume`, rebuilds the whole
 * message from it; `Last-Event-ID` is not used), live to the run's end, from any node.
 */
export function streamUIMessages(res: ServerResponse, runId: string, ctx: Pick<RemoteUIChatContext, 'streams' | 'sse'>): void {
  const sse = new SseStream(res, { 'x-vercel-ai-ui-message-stream': UI_MESSAGE_STREAM_HEADERS['x-vercel-ai-ui-message-stream']!, 'x-run-id': runId });
  ctx.sse.add(sse);
  const mapper = new UIMessageChunkMapper(runId);
  const send = (chunks: readonly UIMessageChunk[]): void => {
    for (const chunk of chunks) sse.send(JSON.stringify(chunk));
  };
  const unwatch = ctx.streams.watch(
    runId,
    0,
    {
      event: (event) => send(mapper.map(event)),
      // Retention removed the run's next events: the message cannot be completed; say so (an AI SDK error chunk), then end.
      pruned: (error) => send([{ type: 'error', errorText: error.message }]),
      end: () => {
        send(mapper.end());
        sse.send('[DONE]');
        sse.end();
      },
    },
    { throughParks: true },
  );
  sse.onClose(() => {
    unwatch();
    ctx.sse.delete(sse);
  });
}
