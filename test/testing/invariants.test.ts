import { describe, expect, it } from 'vitest';
import { INVARIANTS } from '../../src/entry/testing.js';
import { builtInViolations, type PathFacts } from '../../src/testing/invariants.js';
import type { PathLogEntry } from '../../src/testing/path-driver.js';
import type { RunEvent } from '../../src/index.js';

// Each built-in invariant, fed a path that breaks it (the runtime itself never does: these are the checks' own tests).
const base = { runId: 'r1', path: ['A'], agent: 'A' };
const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, requests: 0 };
const callOf = (id: string, name = 't') => ({ id, name, arguments: '{}' });
const ev = (e: Record<string, unknown>): RunEvent => ({ ...base, ...e }) as unknown as RunEvent;
const started = ev({ type: 'run_started', input: 'q' });
const asked = (...ids: string[]) => ev({ type: 'message_completed', turn: 1, message: { role: 'assistant', content: '', toolCalls: ids.map((id) => callOf(id)), agent: 'A' }, usage });
const result = (id: string, isError = false, output = 'ok') => ev({ type: 'tool_call_completed', turn: 1, call: callOf(id), result: output, output, isError, details: undefined, terminate: false });
const completed = ev({ type: 'run_completed', output: 'done', usage, turns: 1 });
const facts = (events: RunEvent[], log: PathLogEntry[] = [], limit = 10): PathFacts => ({ events, log, turnLimit: () => limit });
const broken = (f: PathFacts) => builtInViolations(f).map((v) => `${v.invariant}: ${v.message}`);

describe('the built-in invariants', () => {
  it('are these seven, each with its promise', () => {
    expect(INVARIANTS.map((i) => i.name)).toEqual(['one result per call', 'one terminal event per run', 'approvals fail closed', 'nothing runs after cancel', 'turn limits kept', 'budgets stop runs', 'every wait ends']);
  });

  it('hold on a well-formed path', () => {
    expect(broken(facts([started, asked('c1'), result('c1'), completed]))).toEqual([]);
  });

  it('one result per call: a call without a result, with two, and a result nobody asked for', () => {
    expect(broken(facts([started, asked('c1', 'c2'), result('c2'), result('c2'), result('c3'), completed]))).toEqual([
      'one result per call: call r1/c1 (t) has 0 results',
      'one result per call: call r1/c2 (t) has 2 results',
      'one result per call: a result for r1/c3, which no model asked for',
    ]);
  });

  it('one terminal event per run: no end, two ends, events after the end', () => {
    expect(broken(facts([started]))).toEqual(['one terminal event per run: run r1 ended 0 times']);
    expect(broken(facts([started, completed, completed]))).toEqual(['one terminal event per run: run r1 ended 2 times']);
    expect(broken(facts([started, completed, ev({ type: 'turn_started', turn: 2 })]))).toEqual(['one terminal event per run: run r1 has turn_started after its end']);
  });

  it('approvals fail closed: a gated call that ran undecided or denied, and a denied call with a result that is not an error', () => {
    const gated = ev({ type: 'approval_required', turn: 1, call: callOf('c1'), approvalId: 'r1:1.0', args: {} });
    const ran: PathLogEntry = { kind: 'tool', runId: 'r1', callId: 'c1', tool: 't', alwaysGated: false };
    expect(broken(facts([started, asked('c1'), gated, result('c1'), completed], [ran]))).toEqual(['approvals fail closed: t ran for r1/c1 without an approval']);
    expect(broken(facts([started, asked('c1'), result('c1'), completed], [{ ...ran, alwaysGated: true }]))).toEqual(['approvals fail closed: t ran for r1/c1 without an approval']);
    const denied: PathLogEntry = { kind: 'decision', runId: 'r1', callId: 'c1', approved: false };
    expect(broken(facts([started, asked('c1'), gated, result('c1'), completed], [denied]))).toEqual(['approvals fail closed: denied call r1/c1 got a result that is not an error']);
    expect(broken(facts([started, asked('c1'), gated, result('c1'), completed], [{ ...denied, approved: true }, ran]))).toEqual([]);
  });

  it('nothing runs after cancel: a model request or a tool attempt after it', () => {
    const log: PathLogEntry[] = [{ kind: 'cancel', at: 'A reply 1' }, { kind: 'model', runId: 'r1', agent: 'A' }, { kind: 'tool', runId: 'r1', callId: 'c1', tool: 't', alwaysGated: false }];
    expect(broken(facts([started, completed], log))).toEqual(['nothing runs after cancel: A was asked after the cancel', 'nothing runs after cancel: t ran for r1/c1 after the cancel']);
  });

  it('turn limits kept: more turns than the limit', () => {
    const turns = [1, 2, 3].map((turn) => ev({ type: 'turn_started', turn }));
    expect(broken(facts([started, ...turns, completed], [], 2))).toEqual(['turn limits kept: run r1 (A) started 3 turns, over its limit of 2']);
  });

  it('budgets stop runs: a reply after going over the budget, and a run over its budget that completed', () => {
    const spent = (totalTokens: number) => ({ ...usage, totalTokens });
    const reply = (totalTokens: number) => ev({ type: 'message_completed', turn: 1, message: { role: 'assistant', content: 'x', toolCalls: [], agent: 'A' }, usage: spent(totalTokens) });
    const budgeted = (events: RunEvent[]): PathFacts => ({ ...facts(events), budgetOf: (runId) => (runId === 'r1' ? { maxTotalTokens: 10 } : undefined) });
    const overCompleted = ev({ type: 'run_completed', output: 'done', usage: spent(14), turns: 2 });
    expect(broken(budgeted([started, reply(5), reply(12), reply(14), overCompleted]))).toEqual([
      'budgets stop runs: run r1 made 1 model reply after going over its budget (total tokens 12 > 10)',
      'budgets stop runs: run r1 went over its budget (total tokens 12 > 10) and ended with run_completed',
    ]);
    expect(broken(budgeted([started, reply(5), overCompleted]))).toEqual(['budgets stop runs: run r1 went over its budget (total tokens 14 > 10) and ended with run_completed']);
    const stopped = ev({ type: 'run_failed', error: Object.assign(new Error('total tokens 12 exceeds budget 10'), { name: 'BudgetExceeded' }), usage: spent(12), turns: 1 });
    expect(broken(budgeted([started, reply(5), reply(12), stopped]))).toEqual([]);
    // Without a budget for the run, nothing is checked.
    expect(broken(facts([started, reply(5), reply(12), reply(14), overCompleted]))).toEqual([]);
  });

  it('every wait ends: an approval never decided and a wait never ended, unless the run was cancelled or suspended', () => {
    const gated = ev({ type: 'approval_required', turn: 1, call: callOf('c1'), approvalId: 'r1:1.0', args: {} });
    const opened = ev({ type: 'wait_opened', turn: 1, call: callOf('c2'), waitId: 'w2', kind: 'event', detail: { name: 'e' }, deadline: undefined });
    const failed = ev({ type: 'run_failed', error: Object.assign(new Error('x'), { name: 'ModelError' }), usage, turns: 1 });
    expect(broken(facts([started, gated, opened, failed])).filter((m) => m.startsWith('every wait'))).toEqual(['every wait ends: approval r1:1.0 (t) was never decided', 'every wait ends: wait w2 (t) never ended']);
    const cancelled = ev({ type: 'run_failed', error: Object.assign(new Error('x'), { name: 'RunCancelled' }), usage, turns: 1 });
    expect(broken(facts([started, gated, opened, cancelled])).filter((m) => m.startsWith('every wait'))).toEqual([]);
  });
});
