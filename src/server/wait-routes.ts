/**
 * Resolving a run's waits over HTTP: `POST /api/runs/:id/signal {name, payload?}` (an external
 * event for the calls waiting in `waitForEvent(name)`) and `POST /api/chat/answer {runId,
 * requestId, answer}` (a question an askHuman tool asked), for a run this server runs live, a
 * run parked in the checkpoint store, and, with `--workers external`, a run a worker owns
 * (sent through the bus: the owner applies it, or the next worker records it and resumes).
 */
import type { IncomingMessage } from 'node:http';
import { RunLocked, UserError } from '../errors.js';
import { isFinished } from '../run-status.js';
import { resolveStoredWaits } from '../runtime/stored-waits.js';
import { waitKind } from '../waits/kinds/index.js';
import type { WaitView } from '../waits/wait-types.js';
import type { CheckpointStore, RunStatus } from '../store/checkpoint-store.js';
import type { RunBus } from '../store/run-bus.js';
import { HttpError, checkFields, parseJsonBody } from './http.js';
import { resumeRoute, type RecoveryHost } from './run-recovery.js';
import type { RunRegistry } from './run-registry.js';
import { storedTreeWaits, type CallWaitView } from './tree-waits.js';

/** Longest event name, answer text and option list the API takes. */
const MAX_NAME = 200;
const MAX_TEXT = 20_000;
const MAX_CHOICES = 100;

/** What the worker-mode routes need of the cluster (WaitCluster has it). */
interface WaitCluster {
  readonly store: CheckpointStore & { runState(runId: string): Promise<RunStatus | undefined> };
  readonly bus: RunBus;
}

const SIGNAL = /^\/api\/runs\/([^/]+)\/signal$/;

/** The run id of a `/api/runs/:id/signal` path; undefined for any other path. @throws HttpError 400 `invalid_run_id`. */
export function signalRunId(pathname: string): string | undefined {
  const match = SIGNAL.exec(pathname);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    throw new HttpError(400, 'invalid_run_id', 'Run id is not valid URL encoding.');
  }
}

export interface SignalBody {
  readonly name: string;
  /** A JSON value; null when the body has none. */
  readonly payload: unknown;
}

/** `{name, payload?}`. @throws HttpError 400 (`missing_field`, `invalid_field`, `unknown_field`, …) for any other body. */
export function parseSignalBody(text: string, req: IncomingMessage): SignalBody {
  const raw = parseJsonBody(text, req);
  const body = checkFields({ ...raw, payload: undefined }, { name: { type: 'string', nonEmpty: true, maxLength: MAX_NAME }, payload: { type: 'string', optional: true } });
  return { name: body.name!, payload: raw.payload === undefined ? null : raw.payload };
}

export interface AnswerBody {
  readonly runId: string;
  readonly requestId: string;
  readonly answer: string | string[];
}

/** `{runId, requestId, answer}`; `answer` a string or an array of strings (a multi-select). @throws HttpError 400 for any other body. */
export function parseAnswerBody(text: string, req: IncomingMessage): AnswerBody {
  const raw = parseJsonBody(text, req);
  const answer = raw.answer;
  // The string fields go through the shared checks; the answer (string or list) is checked here.
  const body = checkFields({ ...raw, answer: undefined }, { runId: { type: 'string', nonEmpty: true }, requestId: { type: 'string', nonEmpty: true }, answer: { type: 'string', optional: true } });
  if (answer === undefined) throw new HttpError(400, 'missing_field', "Missing field 'answer'.");
  const ok = typeof answer === 'string' ? answer.length <= MAX_TEXT : Array.isArray(answer) && answer.length <= MAX_CHOICES && answer.every((a) => typeof a === 'string' && a.length <= MAX_TEXT);
  if (!ok) throw new HttpError(400, 'invalid_field', `Field 'answer' must be a string or an array of at most ${MAX_CHOICES} strings.`);
  return { runId: body.runId!, requestId: body.requestId!, answer: answer as string | string[] };
}

function viewOf(wait: CallWaitView): WaitView {
  return { waitId: wait.waitId, kind: wait.kind, runId: wait.runId, callId: wait.callId, tool: wait.tool, path: [], agent: '', turn: 0, requestedAt: wait.since, deadline: wait.deadline, detail: wait.detail };
}

/** The resolution as the wait's kind takes it. @throws HttpError 400 `invalid_payload` / `invalid_answer` when it does not fit. */
function checkResolution(wait: CallWaitView, given: unknown): unknown {
  try {
    return waitKind(wait.kind).resolution(viewOf(wait), given);
  } catch (error) {
    if (error instanceof UserError) throw new HttpError(400, wait.kind === 'question' ? 'invalid_answer' : 'invalid_payload', error.message);
    throw error;
  }
}

const eventWaits = (waits: readonly CallWaitView[], name: string) => waits.filter((w) => w.kind === 'event' && w.detail['name'] === name);
const question = (waits: readonly CallWaitView[], requestId: string) => waits.find((w) => w.kind === 'question' && w.waitId === requestId);

function noEventWait(runId: string, name: string): HttpError {
  return new HttpError(404, 'wait_not_found', `No call of run '${runId}' waits for event '${name}' (signals are not kept for later).`);
}

function noQuestion(runId: string, requestId: string): HttpError {
  return new HttpError(404, 'question_not_found', `No question '${requestId}' is waiting in run '${runId}'.`);
}

function rootOf(runId: string): string {
  if (runId.includes('/')) throw new HttpError(400, 'invalid_run_id', `'${runId}' is a sub-run; address its root run '${runId.split('/')[0]}'.`);
  return runId;
}

/** Looks this long for a wait not logged yet (its event and its log entry are written separately). */
const LOOK_AGAIN_MS = [50, 100, 200, 400];

async function treeWaitsUntil(store: WaitCluster['store'], runId: string, found: (waits: readonly CallWaitView[]) => boolean): Promise<CallWaitView[]> {
  for (let attempt = 0; ; attempt++) {
    let waits: CallWaitView[];
    try {
      waits = (await storedTreeWaits(store, runId)).waits;
    } catch (error) {
      throw new HttpError(409, 'run_damaged', `Run '${runId}' cannot be read: ${(error as Error).message}`);
    }
    if (found(waits) || attempt >= LOOK_AGAIN_MS.length) return waits;
    await new Promise((resolve) => setTimeout(resolve, LOOK_AGAIN_MS[attempt]));
  }
}

/**
 * This server's signal (no workers): a live run gets it at once (200, `delivered`: how many
 * calls); a stored run (parked here or by a process that is gone) gets it recorded in its log
 * and is resumed here (200, `resumed: true`).
 * @throws HttpError 404 `run_not_found` / `wait_not_found`, 409 `run_finished` / `run_locked`, 400 `invalid_payload` / `invalid_run_id` (a sub-run id).
 */
export async function signalLocal(registry: RunRegistry, recovery: RecoveryHost | undefined, runId: string, body: SignalBody): Promise<Record<string, unknown>> {
  rootOf(runId);
  const run = registry.get(runId);
  if (run && !run.finished) {
    let delivered: number;
    try {
      delivered = run.handle.signal(body.name, body.payload);
    } catch (error) {
      if (error instanceof UserError) throw new HttpError(400, 'invalid_payload', error.message);
      throw error;
    }
    if (delivered === 0) throw noEventWait(runId, body.name);
    return { runId, name: body.name, delivered };
  }
  const stored = await storedWaitsHere(recovery, runId, run && isFinished(run.status) ? run.status : undefined);
  const matches = eventWaits(stored.waits, body.name);
  if (matches.length === 0) throw noEventWait(runId, body.name);
  for (const wait of matches) checkResolution(wait, body.payload);
  let delivered = 0;
  for (const waitRunId of new Set(matches.map((w) => w.runId))) {
    const ids = new Set(matches.filter((w) => w.runId === waitRunId).map((w) => w.waitId));
    delivered += (await recordHere(() => resolveStoredWaits(recovery!.store, waitRunId, (pending) => pending.filter((w) => ids.has(w.waitId)), body.payload, 'api'))).length;
  }
  return { runId, name: body.name, delivered, resumed: await resumeHere(recovery!, runId) };
}

/**
 * This server's answer for a stored run (a live one is answered by `answerQuestion`): recorded
 * in the log of the run that asked, and the tree resumed here (200, `resumed: true`).
 * @throws HttpError 404 `run_not_found` / `question_not_found`, 409 `run_finished` / `run_locked`, 400 `invalid_answer`.
 */
export async function answerStoredHere(recovery: RecoveryHost | undefined, body: AnswerBody): Promise<Record<string, unknown>> {
  const runId = rootOf(body.runId);
  const stored = await storedWaitsHere(recovery, runId, undefined);
  const wait = question(stored.waits, body.requestId);
  if (!wait) throw noQuestion(runId, body.requestId);
  checkResolution(wait, body.answer);
  await recordHere(() => resolveStoredWaits(recovery!.store, wait.runId, (pending) => pending.filter((w) => w.waitId === wait.waitId), body.answer, 'api'));
  return { runId, requestId: body.requestId, answer: body.answer, resumed: await resumeHere(recovery!, runId) };
}

async function storedWaitsHere(recovery: RecoveryHost | undefined, runId: string, liveStatus: string | undefined): Promise<{ waits: CallWaitView[] }> {
  if (liveStatus !== undefined) throw new HttpError(409, 'run_finished', `Run '${runId}' has already finished (${liveStatus}).`);
  if (!recovery) throw new HttpError(404, 'run_not_found', `No run '${runId}'.`);
  let saved;
  try {
    saved = await recovery.store.load(runId);
  } catch (error) {
    throw new HttpError(409, 'run_damaged', `Run '${runId}' cannot be read: ${(error as Error).message}`);
  }
  if (!saved) throw new HttpError(404, 'run_not_found', `No run '${runId}'.`);
  if (isFinished(saved.head.status)) throw new HttpError(409, 'run_finished', `Run '${runId}' has already finished (${saved.head.status}).`);
  return storedTreeWaits(recovery.store, runId).catch((error: unknown) => {
    throw new HttpError(409, 'run_damaged', `Run '${runId}' cannot be read: ${(error as Error).message}`);
  });
}

/** Appends under a lease of this server's own. @throws HttpError 409 `run_locked` when another process holds the run. */
async function recordHere<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    if (error instanceof RunLocked) throw new HttpError(409, 'run_locked', `${error.message} It is running elsewhere: send the signal or answer to the server that runs it.`);
    if (error instanceof UserError) throw new HttpError(400, 'invalid_request', error.message);
    throw error;
  }
}

/** Continues the run here now that a wait of it is resolved; false when it cannot be (it is then resumed by whoever can: a restart, POST /api/runs/:id/resume). */
async function resumeHere(recovery: RecoveryHost, runId: string): Promise<boolean> {
  if (recovery.isLive(runId)) return false;
  try {
    await resumeRoute(recovery, runId);
    return true;
  } catch {
    return false;
  }
}

/**
 * With workers: checks the signal against the run tree's stored waits and sends it to the run's
 * owner; returns what it sent and the ids of the waits it was sent for (`signalRemoteAwaited` answers). It takes effect when the owning worker applies it, or, for a parked run, when
 * the next worker records it in the log and resumes the run.
 * @throws HttpError 404 `run_not_found` / `wait_not_found`, 409 `run_finished`, 400 `invalid_payload` / `invalid_run_id`.
 */
export async function signalRemote(cluster: WaitCluster, runId: string, body: SignalBody): Promise<Record<string, unknown> & { waitIds: string[] }> {
  await liveRootState(cluster, rootOf(runId));
  const waits = eventWaits(await treeWaitsUntil(cluster.store, runId, (w) => eventWaits(w, body.name).length > 0), body.name);
  if (waits.length === 0) throw noEventWait(runId, body.name);
  for (const wait of waits) checkResolution(wait, body.payload);
  await cluster.bus.send(runId, { kind: 'signal', name: body.name, payload: body.payload, by: 'api' });
  return { runId, name: body.name, waiting: waits.length, waitIds: waits.map((wait) => wait.waitId) };
}

/** With workers: `POST /api/chat/answer`, checked against the stored question and sent to the run's owner (`answerRemoteAwaited` answers). */
export async function answerRemote(cluster: WaitCluster, body: AnswerBody): Promise<Record<string, unknown>> {
  const runId = rootOf(body.runId);
  await liveRootState(cluster, runId);
  const wait = question(await treeWaitsUntil(cluster.store, runId, (w) => question(w, body.requestId) !== undefined), body.requestId);
  if (!wait) throw noQuestion(runId, body.requestId);
  checkResolution(wait, body.answer);
  await cluster.bus.send(runId, { kind: 'answer', requestId: body.requestId, answer: body.answer, by: 'api' });
  return { runId, requestId: body.requestId, answer: body.answer };
}

async function liveRootState(cluster: WaitCluster, runId: string): Promise<void> {
  const state = await cluster.store.runState(runId);
  if (state === undefined) throw new HttpError(404, 'run_not_found', `No run '${runId}'.`);
  if (isFinished(state)) throw new HttpError(409, 'run_finished', `Run '${runId}' has already finished (${state}).`);
}
