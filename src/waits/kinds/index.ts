import type { WaitKindName } from '../wait-types.js';
import { approvalKind } from './approval.js';
import { eventKind } from './event.js';
import { questionKind } from './question.js';
import { timerKind } from './timer.js';
import type { WaitKind } from './wait-kind.js';

/** Every kind of wait, by name: the one list the runtime, the log format and the routes read. */
export const WAIT_KINDS: Readonly<Record<WaitKindName, WaitKind>> = {
  approval: approvalKind,
  question: questionKind,
  event: eventKind,
  timer: timerKind,
};

export function waitKind(name: WaitKindName): WaitKind {
  return WAIT_KINDS[name];
}
