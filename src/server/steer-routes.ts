import type { IncomingMessage } from 'node:http';
import { UserError } from '../errors.js';
import { HttpError, checkFields, parseJsonBody, parseJsonObject } from './http.js';
import type { HumanAnswer } from '../runtime/humans.js';
import type { RunRegistry } from './run-registry.js';
import type { ServerRun } from './runs.js';

/** Longest steer text and answer the API takes. */
const MAX_TEXT = 20_000;
const MAX_CHOICES = 100;

function liveRun(registry: RunRegistry, runId: string): ServerRun {
  const run = registry.get(runId);
  if (!run) throw new HttpError(404, 'run_not_found', `No run '${runId}'.`);
  if (run.finished) throw new HttpError(409, 'run_finished', `Run '${run.id}' has already finished (${run.status}).`);
  return run;
}

/**
 * `POST /api/chat/steer {runId, text, queue?: "steer" | "follow_up"}`: a user message for the
 * run's next model request (or, as a follow-up, for when it would end). Answers the message id.
 */
export function steerRun(registry: RunRegistry, text: string, req: IncomingMessage): { status: number; body: unknown } {
  const body = parseJsonObject(text, req, {
    runId: { type: 'string', nonEmpty: true },
    text: { type: 'string', nonEmpty: true, maxLength: MAX_TEXT },
    queue: { type: 'enum', values: ['steer', 'follow_up'], optional: true },
  });
  const run = liveRun(registry, body.runId!);
  const id = body.queue === 'follow_up' ? run.handle.followUp(body.text!) : run.handle.steer(body.text!);
  return { status: 202, body: { runId: run.id, id, queue: body.queue ?? 'steer' } };
}

/**
 * `POST /api/chat/answer {runId, requestId, answer}`: answers a question an askHuman tool asked
 * through the run (`human_request`). `answer` is a string, an array of options for a
 * multi-select, or for a form an object by key of those (null cancels one question). 404 when nothing waits under that id; 400 `invalid_answer` when it does not fit.
 */
export function answerQuestion(registry: RunRegistry, text: string, req: IncomingMessage): { status: number; body: unknown } {
  const raw = parseJsonBody(text, req);
  const answer = raw.answer;
  // The string fields go through the shared checks; the answer (string or list) is checked here.
  const body = checkFields({ ...raw, answer: undefined }, { runId: { type: 'string', nonEmpty: true }, requestId: { type: 'string', nonEmpty: true }, answer: { type: 'string', optional: true } });
  if (answer === undefined) throw new HttpError(400, 'missing_field', "Missing field 'answer'.");
  const one = (a: unknown): boolean => (typeof a === 'string' ? a.length <= MAX_TEXT : Array.isArray(a) && a.length <= MAX_CHOICES && a.every((x) => typeof x === 'string' && x.length <= MAX_TEXT));
  const form = typeof answer === 'object' && answer !== null && !Array.isArray(answer) ? Object.values(answer as Record<string, unknown>) : undefined;
  const ok = form ? form.length <= MAX_CHOICES && form.every((a) => a === null || one(a)) : one(answer);
  if (!ok) throw new HttpError(400, 'invalid_field', `Field 'answer' must be a string, an array of at most ${MAX_CHOICES} strings, or (a form) an object of at most ${MAX_CHOICES} of those or null.`);
  const run = liveRun(registry, body.runId!);
  let answered: boolean;
  try {
    answered = run.handle.humans.answer(body.requestId!, answer as HumanAnswer);
  } catch (error) {
    if (error instanceof UserError) throw new HttpError(400, 'invalid_answer', error.message);
    throw error;
  }
  if (!answered) throw new HttpError(404, 'question_not_found', `No question '${body.requestId}' is waiting in run '${run.id}'.`);
  return { status: 200, body: { runId: run.id, requestId: body.requestId, answer } };
}
