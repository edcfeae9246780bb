import { WaitTimeout } from '../../errors.js';
import { formOf } from '../../runtime/human-form.js';
import { checkHumanAnswer, type HumanAnswer } from '../../runtime/humans.js';
import { DETAIL_ISSUE, RESOLUTION_ISSUE } from './records.js';
import type { WaitKind } from './wait-kind.js';

/**
 * A question a tool asks a person (`askHuman` without a channel, `askFromTool`): detail
 * `{ question, options?, multiSelect, form? }`; resolution: the answer (a form's: an object by key).
 */
export const questionKind: WaitKind = {
  name: 'question',
  atDeadline: 'timeout',
  resolution: (view, given) => checkHumanAnswer(view.detail, given),
  callResult: (view, outcome) => {
    if (outcome.ended === 'timedOut') return { error: new WaitTimeout(`no answer to '${String(view.detail['question'])}' within ${view.deadline! - view.requestedAt} ms`) };
    const answer = outcome.resolution as HumanAnswer;
    return { value: answer === '' ? '(no answer)' : answer };
  },
  openedEvent: (view, base) => ({
    type: 'human_request',
    ...base,
    requestId: view.waitId,
    question: String(view.detail['question']),
    ...(Array.isArray(view.detail['options']) ? { options: view.detail['options'] as string[] } : {}),
    multiSelect: view.detail['multiSelect'] === true,
    ...(formOf(view.detail) ? { form: formOf(view.detail)! } : {}),
  }),
  resolvedEvent: (view, outcome, base) => (outcome.ended === 'resolved' ? { type: 'human_answer', ...base, requestId: view.waitId, answer: outcome.resolution as HumanAnswer } : undefined),
  detailIssue: DETAIL_ISSUE.question,
  resolutionIssue: RESOLUTION_ISSUE.question,
};
