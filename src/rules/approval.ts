import type { ApprovalDecision } from '../agent.js';

/**
 * A `needsApproval` predicate's answer: anything truthy ('yes', 1, {}) means the call needs
 * an approval. Fail closed: only a falsy answer lets the call run unasked.
 */
export function approvalNeeded(answer: unknown): boolean {
  return Boolean(answer);
}

/** An approval handler's answer: only `true` or `"allow"` allows; "ask" waits for a person; anything else denies. */
export function handlerVerdict(answer: ApprovalDecision | unknown): 'allow' | 'ask' | 'deny' {
  if (answer === true || answer === 'allow') return 'allow';
  if (answer === 'ask') return 'ask';
  return 'deny';
}
