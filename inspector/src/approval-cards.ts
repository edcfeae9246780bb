import type { Api } from './api.js';
import { ApiError } from './api.js';
import { h, ms, short } from './dom.js';
import type { Store } from './store.js';

/**
 * Pending approval cards: tool and arguments, the agent path that asked, the run that waits
 * (a sub-run id when a sub-run asked) and its root run, the wait and the server's auto-deny
 * deadline, Approve and Deny. Cards are keyed by approval id: two sub-runs may both wait on `k1`.
 */
export function approvalCards(container: HTMLElement, store: Store, api: Api, now: number, notice: (text: string, kind?: 'info' | 'error') => void, agentOf: (run: string) => string | undefined): void {
  const pending = [...store.approvals.values()];
  if (pending.length === 0) {
    if (!container.querySelector('.empty')) container.replaceChildren(h('li', { class: 'muted empty' }, 'None.'));
    return;
  }
  const existing = new Map([...container.querySelectorAll<HTMLLIElement>('li[data-key]')].map((li) => [li.dataset.key!, li]));
  const items = pending.map((approval) => {
    const key = approval.approvalId;
    let li = existing.get(key);
    if (!li) {
      const approve = h('button', { class: 'approve', type: 'button' }, 'Approve');
      const deny = h('button', { class: 'deny', type: 'button' }, 'Deny');
      const decide = async (decision: 'approve' | 'deny'): Promise<void> => {
        approve.disabled = deny.disabled = true;
        try {
          await api.decide(approval.run, approval.approvalId, decision);
          notice(`${decision === 'approve' ? 'Approved' : 'Denied'} ${approval.tool} (${approval.callId} in ${approval.runId}).`);
        } catch (error) {
          notice(error instanceof ApiError ? error.message : String(error), 'error');
          approve.disabled = deny.disabled = false;
        }
      };
      approve.addEventListener('click', () => void decide('approve'));
      deny.addEventListener('click', () => void decide('deny'));
      const root = approval.run === approval.runId ? '' : ` (in ${approval.run}${agentOf(approval.run) ? `, ${agentOf(approval.run)}` : ''})`;
      li = h(
        'li',
        { class: 'approval', 'data-key': key, 'data-approval-id': approval.approvalId, 'data-call-id': approval.callId, 'data-run-id': approval.runId },
        h('div', { class: 'approval-title' }, h('strong', {}, approval.tool), ' ', h('code', {}, short(approval.args, 160))),
        // Which run waits and who asked: two sub-runs may wait on the same call id.
        h('div', { class: 'approval-path muted' }, `${approval.path.join(' › ')} · ${approval.callId}`),
        h('div', { class: 'approval-run muted' }, `run ${approval.runId}`),
        root ? h('div', { class: 'approval-root muted' }, `sub-run${root}`) : undefined,
        h('div', { class: 'approval-wait muted' }),
        h('div', { class: 'approval-buttons' }, approve, deny),
      );
    }
    const waited = now - approval.since;
    const left = approval.deadline !== undefined ? ` · auto-deny in ${ms(Math.max(0, approval.deadline - now))}` : '';
    li.querySelector('.approval-wait')!.textContent = `waiting ${ms(waited)}${left}`;
    return li;
  });
  container.replaceChildren(...items);
}
