/**
 * Coverage counters for the property runs: how often each kind of call, outcome, approval
 * path and run ending actually happened, so a green run shows what it exercised.
 * Printed by the test files after the property (one line per group).
 */
import type { RunEvent } from '../../src/index.js';
import type { CaseRecord } from './runner.js';

type Counter = Map<string, number>;

export class Stats {
  readonly groups = new Map<string, Counter>();
  /** The first XState "sent to stopped actor" warning, with the case that caused it. */
  firstWarning: string | undefined;

  add(group: string, key: string, by = 1): void {
    const counter = this.groups.get(group) ?? new Map<string, number>();
    counter.set(key, (counter.get(key) ?? 0) + by);
    this.groups.set(group, counter);
  }

  /** Folds one finished case into the counters. */
  record(record: CaseRecord): void {
    const { plan, rec, events } = record;
    this.add('cases', 'total');
    const last = events[events.length - 1];
    this.add('root ends', last?.type === 'run_failed' ? `failed:${last.error?.constructor?.name}` : (last?.type ?? 'none'));
    for (const e of events) {
      if (e.runId !== record.rootRunId && (e.type === 'run_completed' || e.type === 'run_failed')) {
        this.add('sub-run ends', e.type === 'run_failed' ? `failed:${e.error?.constructor?.name}` : 'completed');
      }
      if (e.type === 'handoff_occurred') this.add('events', `handoff_occurred@depth${e.path.length}`);
      if (e.type === 'tool_call_failed') this.add('events', `tool_call_failed attempt ${Math.min(e.attempt, 2)}`);
      if (e.type === 'approval_required') this.add('events', 'approval_required');
    }
    const completedBy = new Map<string, Extract<RunEvent, { type: 'tool_call_completed' }>>();
    for (const e of events) if (e.type === 'tool_call_completed') completedBy.set(e.call.arguments, e);
    for (const slot of plan.slots) {
      const done = completedBy.get(slot.args);
      if (!done) continue;
      this.add('calls', slot.kind);
      this.add('outcomes', outcome(done.output, rec.bodyRuns(slot.n).length > 0));
      if (slot.id === '') this.add('ids', 'empty');
    }
    const ids = new Set<string>();
    for (const e of events) if (e.type === 'tool_call_completed') {
      const key = `${e.runId}|${e.turn}|${e.call.id}`;
      if (ids.has(key)) this.add('ids', 'duplicate in one reply');
      ids.add(key);
    }
    const subCallIds = new Set(events.filter((e) => e.type === 'tool_call_completed' && e.runId !== record.rootRunId).map((e) => (e as { call: { id: string } }).call.id));
    const rootCallIds = new Set(events.filter((e) => e.type === 'tool_call_completed' && e.runId === record.rootRunId).map((e) => (e as { call: { id: string } }).call.id));
    if ([...subCallIds].some((id) => rootCallIds.has(id))) this.add('ids', 'reused by a sub-run');
    for (const [, decisions] of rec.decisions) {
      const first = decisions[0]!;
      this.add('approvals', `${first.by}:${first.approved ? 'approve' : 'deny'}`);
    }
    for (const [what, n] of rec.notes) this.add('paths', what, n);
    if (rec.cancelRequested) this.add('cases', 'cancel requested');
    if (plan.scenario.maxToolCalls !== undefined) this.add('cases', 'tool-call budget');
    if (plan.scenario.maxTotalTokens !== undefined) this.add('cases', 'token budget');
  }

  lines(): string[] {
    const first = this.firstWarning ? [`first xstate warning: ${this.firstWarning.replace(/\n/g, '\n    ')}`] : [];
    return [...this.groups].map(([group, counter]) => `${group}: ${[...counter].sort((a, b) => b[1] - a[1]).map(([k, n]) => `${k} ${n}`).join(', ')}`).concat(first);
  }
}

function outcome(output: string, ran: boolean): string {
  if (output.startsWith('Tool error: run cancelled')) return 'cancelled';
  if (output.startsWith('Tool error: tool call count')) return 'over budget';
  if (/^Tool error: \w+ tokens \d+ exceeds budget/.test(output)) return 'over budget (tokens)';
  if (output.startsWith('Tool error: not executed: total tokens')) return 'not executed (tokens)';
  if (output.startsWith('Tool error: not executed')) return 'not executed';
  if (output.startsWith('Tool error: approval denied')) return 'approval denied';
  if (output.includes('[... tool output truncated')) return 'truncated';
  if (output.startsWith('Tool error: agent ')) return 'sub-run failed';
  if (output.startsWith('Transferred to')) return 'handoff';
  if (output.startsWith('Handoff not performed')) return 'handoff refused';
  if (output.includes('timed out after')) return 'timed out';
  if (output.startsWith('Tool error:')) return ran ? 'tool error (ran)' : 'tool error (preflight)';
  return 'result';
}
