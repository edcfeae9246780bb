import type { IncomingMessage } from 'node:http';
import type { Agent } from '../agent.js';
import { InvalidToolArguments, UserError } from '../errors.js';
import { findAgentTool } from '../runtime/agent-graph.js';
import { editedArguments } from '../runtime/approvals.js';
import { checkDecisionEdits } from '../runtime/decide.js';
import { validateArguments } from '../tools/validate.js';
import { HttpError, checkFields, parseJsonBody } from './http.js';

/** A `POST /api/chat/approve` body, checked. */
export interface ApproveBody {
  readonly approvalId?: string;
  readonly runId?: string;
  readonly callId?: string;
  readonly approve: boolean;
  /** With a denial only; an empty reason is no reason. */
  readonly reason?: string;
  /** With an approval only: the arguments the call runs with instead of the model's (a JSON object). */
  readonly args?: Record<string, unknown>;
}

/**
 * Parses `{approvalId | runId+callId, decision: "approve"|"deny", reason?, args?}` (one parser
 * for the local and the cluster route). 400s: the body errors of `checkFields`, `reason` with
 * an approval, `args` with a denial or not a JSON object (`invalid_field`).
 */
export function parseApproveBody(text: string, req: IncomingMessage, maxReasonChars: number): ApproveBody {
  const raw = parseJsonBody(text, req);
  const body = checkFields(raw, {
    approvalId: { type: 'string', nonEmpty: true, optional: true },
    runId: { type: 'string', nonEmpty: true, optional: true },
    callId: { type: 'string', nonEmpty: true, optional: true },
    decision: { type: 'enum', values: ['approve', 'deny'] },
    reason: { type: 'string', maxLength: maxReasonChars, optional: true },
    args: { type: 'json', optional: true },
  });
  const args = raw['args'];
  const approve = body.decision === 'approve';
  if (approve && body.reason !== undefined) throw new HttpError(400, 'invalid_field', 'Field \'reason\' is only allowed with decision "deny".');
  if (args !== undefined) {
    if (!approve) throw new HttpError(400, 'invalid_field', 'Field \'args\' is only allowed with decision "approve".');
    if (typeof args !== 'object' || args === null || Array.isArray(args)) throw new HttpError(400, 'invalid_field', "Field 'args' must be a JSON object: the call's arguments as approved.");
  }
  return {
    ...(body.approvalId !== undefined ? { approvalId: body.approvalId } : {}),
    ...(body.runId !== undefined ? { runId: body.runId } : {}),
    ...(body.callId !== undefined ? { callId: body.callId } : {}),
    approve,
    ...(body.reason ? { reason: body.reason } : {}),
    ...(args !== undefined ? { args: args as Record<string, unknown> } : {}),
  };
}

/**
 * Validates edited `args` against the waiting call's tool, as the run will validate them: found
 * from `root` (the run's first agent) by the waiting agent's name and the tool's name.
 * @throws HttpError 400 `invalid_args` (the validation message) when they do not validate.
 */
export function checkEditedArgs(root: Agent, agentName: string, toolName: string, args: Record<string, unknown>): void {
  try {
    checkDecisionEdits({ approved: true, args });
    const tool = findAgentTool(root, agentName, toolName);
    // A tool the server cannot see (e.g. loaded later): the run still validates them before the call runs.
    if (tool) validateArguments(tool, JSON.parse(editedArguments({ args }).arguments));
  } catch (error) {
    if (error instanceof InvalidToolArguments || error instanceof UserError) throw new HttpError(400, 'invalid_args', error.message);
    throw error;
  }
}
