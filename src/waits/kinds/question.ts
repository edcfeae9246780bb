import { WaitTimeout } from '../../errors.js';
import { checkAnswer } from '../../runtime/humans.js';
import { DETAIL_ISSUE, RESOLUTION_ISSUE } from './records.js';
import type { WaitKind } from './wait-kind.js';

/** A question a tool asks a person (`askHuman` without a channel): detail `{ question, options?, multiSelect }`; resolution: the answer. */
export const questionKind: WaitKind = {
  name: 'question',
  atDeadline: 'timeout',
  resolution: (view, given) => checkAnswer(view.detail as { question: string; options?: readonly string[]; multiSelect: boolean }, given),
  callResult: (view, outcome) => {
    if (outcome.ended === 'timedOut') return { error: new WaitTimeout(`no answer to '${String(view.detail['question'])}' within ${view.deadline! - view.requestedAt} ms`) };
    const answer = outcome.resolution as string | readonly string[];
    return { value: Array.isArray(answer) ? answer : answer === '' ? '(no answer)' : answer };
  },
  openedEvent: (view, base) => ({
    type: 'human_request',
    ...base,
    requestId: view.waitId,
    question: String(view.detail['question']),
    ...(Array.isArray(view.detail['options']) ? { options: view.detail['options'] as string[] } : {}),
    multiSelect: view.detail['multiSelect'] === true,
  }),
  resolvedEvent: (view, outcome, base) => (outcome.ended === 'resolved' ? { type: 'human_answer', ...base, requestId: view.waitId, answer: outcome.resolution as string | readonly string[] } : undefined),
  detailIssue: DETAIL_ISSUE.question,
  resolutionIssue: RESOLUTION_ISSUE.question,
};
