import { createHash } from 'node:crypto';

/**
 * sha256 (hex) of a call's argument text. An approval decision binds to the hash of the
 * model's arguments (`argsHash`) and, when it edits them, to the hash of the edited text
 * (`editedArgsHash`): a stored decision is applied only to the exact bytes it was made for.
 */
export function hashArguments(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Whether a stored decision's edits are intact: none, or text whose hash is the one stored with it. */
export function editsIntact(decision: { readonly editedArguments?: string; readonly editedArgsHash?: string }): boolean {
  if (decision.editedArguments === undefined) return decision.editedArgsHash === undefined;
  return decision.editedArgsHash === hashArguments(decision.editedArguments);
}
