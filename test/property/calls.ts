/**
 * Call-level invariants: exactly one tool_call_completed per call of every committed reply
 * (found by its unique argument text, checked against run id, turn and the model's id), no
 * tool_call_started for preflight rejections, no gated body without an approval, approval
 * events only for gated calls with unique approval ids, and the outcome each kind must have
 * unless the scenario's cancel or budget intervened.
 */
import type { RunEvent } from '../../src/index.js';
import type { Facts } from './invariants.js';
import { PREFLIGHT_KINDS, hangsUntilCancel, hasBudget, isGatedKind, needsApproval, type SlotPlan } from './scenario.js';

type Completed = Extract<RunEvent, { type: 'tool_call_completed' }>;
type ToolEvent = Extract<RunEvent, { call: unknown }>;

const OK_KINDS = new Set(['ok', 'okString', 'slow', 'mail', 'progress', 'retryOk', 'failOnce', 'barrier', 'barrierSlow']);
const THROW_KINDS = new Set(['throw', 'throwRetry', 'barrierThrow']);
/** A BudgetExceeded message as a call's result: preflight checks every budget (the tree's spend included) per call. */
const BUDGET_MESSAGE = /^Tool error: (tool call count|input tokens|output tokens|total tokens|duration ms) \d+ exceeds budget \d+$/;

export function checkCalls(f: Facts, v: string[]): void {
  const { record } = f;
  const { plan, rec } = record;
  const byArgs = new Map<string, ToolEvent[]>();
  for (const e of record.events) {
    if (!('call' in e)) continue;
    const list = byArgs.get(e.call.arguments) ?? [];
    list.push(e as ToolEvent);
    byArgs.set(e.call.arguments, list);
  }
  const committed = new Set<SlotPlan>();
  const approvalIds = new Set<string>();

  for (const agent of plan.agents.values()) {
    const { events: replies } = f.replies.get(agent.name)!;
    replies.forEach(({ event: reply, index: replyIndex }, r) => {
      const slots = agent.replies[r] ?? [];
      for (const slot of slots) {
        committed.add(slot);
        const mine = byArgs.get(slot.args) ?? [];
        const completions = mine.filter((e): e is Completed => e.type === 'tool_call_completed');
        const where = `${agent.name} reply ${r} call #${slot.n} (${slot.kind} ${slot.tool} id ${JSON.stringify(slot.id)})`;
        if (completions.length !== 1) {
          v.push(`${where}: ${completions.length} tool_call_completed events, expected exactly 1`);
          if (!completions.length) continue;
        }
        const done = completions[0]!;
        const doneIndex = f.index.get(done)!;
        for (const e of mine) {
          const i = f.index.get(e)!;
          if (e.runId !== reply.runId || e.turn !== reply.turn) v.push(`${where}: ${e.type} in run ${e.runId} turn ${e.turn}, the reply was run ${reply.runId} turn ${reply.turn}`);
          if (e.call.name !== slot.tool || (slot.id === '' ? !e.call.id : e.call.id !== slot.id)) v.push(`${where}: ${e.type} carries call ${JSON.stringify(e.call)}`);
          if (i < replyIndex) v.push(`${where}: ${e.type} before the reply's message_completed`);
          if (i > doneIndex) v.push(`${where}: ${e.type} after its tool_call_completed`);
        }
        const reported = reply.message.toolCalls[slot.index]?.id;
        if (slot.id === '' && mine.some((e) => e.call.id !== reported)) v.push(`${where}: tool events carry ids ${[...new Set(mine.map((e) => e.call.id))].join(', ')}, the reply reports the generated id ${reported}`);
        checkSlot(f, slot, where, mine, done, v, approvalIds);
      }
    });
  }

  // Nothing happens for calls no committed reply asked for.
  for (const [args, list] of byArgs) {
    const slot = plan.byArgs.get(args);
    if (!slot || !committed.has(slot)) v.push(`${list.length} tool events (${[...new Set(list.map((e) => e.type))].join(', ')}) for arguments ${args}, which no committed reply requested`);
  }
  for (const b of rec.bodies) {
    const slot = plan.byN.get(b.n);
    if (slot && !committed.has(slot)) v.push(`the body of call #${b.n} ran, but no committed reply requested it`);
  }
}

function checkSlot(f: Facts, slot: SlotPlan, where: string, mine: ToolEvent[], done: Completed, v: string[], approvalIds: Set<string>): void {
  const { plan, rec } = f.record;
  const s = plan.scenario;
  const started = mine.filter((e) => e.type === 'tool_call_started');
  const failed = mine.filter((e): e is Extract<RunEvent, { type: 'tool_call_failed' }> => e.type === 'tool_call_failed');
  const asked = mine.filter((e): e is Extract<RunEvent, { type: 'approval_required' }> => e.type === 'approval_required');
  const bodies = rec.bodyRuns(slot.n);
  const out = done.output;

  if (started.length > 1) v.push(`${where}: ${started.length} tool_call_started events`);
  if (bodies.length > 0 && started.length === 0) v.push(`${where}: its body ran without a tool_call_started event`);
  for (const b of bodies) if (b.runId !== done.runId) v.push(`${where}: its body ran in run ${b.runId} (ctx.runId), its events are in run ${done.runId}`);
  const approvalFailures = failed.filter((e) => e.attempt === 0);
  if (approvalFailures.length > 1) v.push(`${where}: ${approvalFailures.length} tool_call_failed events with attempt 0`);
  const attempts = failed.filter((e) => e.attempt > 0).map((e) => e.attempt);
  if (attempts.some((a, i) => a !== i + 1)) v.push(`${where}: tool_call_failed attempts ${JSON.stringify(attempts)}, expected 1, 2, …`);
  const maxAttempts = slot.tool === 'work_retry' ? 2 : 1;
  if (bodies.length > maxAttempts) v.push(`${where}: its body ran ${bodies.length} times, at most ${maxAttempts} attempts`);
  for (const e of mine.filter((x) => x.type === 'tool_call_progress')) {
    if (!started.length || f.index.get(e)! < f.index.get(started[0]!)!) v.push(`${where}: tool_call_progress before tool_call_started`);
  }

  // Approvals: asked only for gated calls, once, with a unique approval id, before any start.
  const needs = needsApproval(slot);
  if (asked.length && needs !== true) v.push(`${where}: approval_required although the call needs no approval (predicate ${JSON.stringify(slot.gate?.needs)})`);
  if (asked.length > 1) v.push(`${where}: ${asked.length} approval_required events`);
  for (const a of asked) {
    const id = (a as { approvalId?: string }).approvalId;
    if (!id) v.push(`${where}: approval_required without an approvalId`);
    else if (approvalIds.has(id)) v.push(`${where}: approvalId ${id} is not unique in the run tree`);
    else approvalIds.add(id);
    if (started.length && f.index.get(a)! > f.index.get(started[0]!)!) v.push(`${where}: approval_required after tool_call_started`);
  }

  const cancelled = out.startsWith('Tool error: run cancelled');
  const budgetStop = BUDGET_MESSAGE.test(out) || out.startsWith('Tool error: not executed:');
  const denied = out.startsWith(`Tool error: approval denied for tool '${slot.tool}'`);
  if ((budgetStop || denied || PREFLIGHT_KINDS.has(slot.kind)) && started.length) v.push(`${where}: tool_call_started for a call rejected in preflight (${JSON.stringify(out)})`);
  if ((budgetStop || denied) && !done.isError) v.push(`${where}: ${JSON.stringify(out)} is not marked isError`);
  if (cancelled) {
    if (!rec.cancelRequested) v.push(`${where}: ${JSON.stringify(out)} but nobody cancelled`);
    if (!done.isError) v.push(`${where}: a cancelled call is not marked isError`);
    return;
  }
  if (budgetStop) {
    if (!hasBudget(s) && !(out.startsWith('Tool error: not executed:') && rec.cancelRequested)) v.push(`${where}: ${JSON.stringify(out)} without a budget`);
    return;
  }
  if (denied) return checkDenial(f, slot, where, out, failed, asked.length > 0, v);
  if (needs !== false && !bodies.length && isGatedKind(slot.kind)) {
    return void v.push(`${where}: a gated call that did not run completed with ${JSON.stringify(out)}, not a denial`);
  }
  if (needs !== false && isGatedKind(slot.kind) && s.approvalTimeoutMs === undefined && rec.firstDecision(slot.n)?.approved === false) {
    v.push(`${where}: denied by this test (${JSON.stringify(rec.firstDecision(slot.n))}) but completed with ${JSON.stringify(out)}`);
  }
  expectOutcome(f, slot, where, done, started.length > 0, failed, v);
}

function checkDenial(f: Facts, slot: SlotPlan, where: string, out: string, failed: readonly { attempt: number }[], asked: boolean, v: string[]): void {
  const { plan, rec } = f.record;
  const needs = needsApproval(slot);
  if (needs === false) return void v.push(`${where}: denied (${JSON.stringify(out)}) although it needs no approval`);
  if (rec.bodyRuns(slot.n).length) v.push(`${where}: denied, yet its body ran`);
  const first = rec.firstDecision(slot.n);
  const base = `Tool error: approval denied for tool '${slot.tool}'`;
  if (plan.scenario.approvalTimeoutMs !== undefined) return; // a timeout may have decided first: any denial is fine
  if (first?.approved) return void v.push(`${where}: approved by this test (${first.by}) but denied: ${JSON.stringify(out)}`);
  const expected = first?.reason ? `${base}: ${first.reason}` : `${base}.`;
  if (out !== expected) v.push(`${where}: denial reads ${JSON.stringify(out)}, expected ${JSON.stringify(expected)}`);
  const throwing = needs === 'throw' || (first?.by === 'handler' && slot.gate?.handler === 'throw');
  if (throwing && !failed.some((e) => e.attempt === 0)) v.push(`${where}: a throwing ${needs === 'throw' ? 'predicate' : 'handler'} gave no tool_call_failed with attempt 0`);
  if (needs === 'throw' && asked) v.push(`${where}: approval_required although the predicate threw`);
  if (needs === true && !asked) v.push(`${where}: denied without an approval_required event`);
}

/** The result each kind of call has when neither the cancel nor the budget got to it first. */
function expectOutcome(f: Facts, slot: SlotPlan, where: string, done: Completed, started: boolean, failed: readonly { attempt: number; willRetry: boolean }[], v: string[]): void {
  const s = f.record.plan.scenario;
  const out = done.output;
  const expect = (output: string, isError: boolean, mustStart: boolean) => {
    if (out !== output || done.isError !== isError) v.push(`${where}: completed with ${JSON.stringify(out)} (isError ${done.isError}), expected ${JSON.stringify(output)} (isError ${isError})`);
    if (mustStart && !started) v.push(`${where}: ran without tool_call_started`);
  };
  const ok = `ok:${slot.n}`;
  if (OK_KINDS.has(slot.kind) || isGatedKind(slot.kind)) {
    expect(ok, false, true);
    if (done.result !== ok) v.push(`${where}: result ${JSON.stringify(done.result)}, expected ${JSON.stringify(ok)}`);
    if (slot.kind === 'failOnce' && (failed.length !== 1 || !failed[0]!.willRetry)) v.push(`${where}: expected one tool_call_failed with willRetry, got ${JSON.stringify(failed)}`);
    return;
  }
  if (THROW_KINDS.has(slot.kind)) {
    expect(`Tool error: boom ${slot.n}`, true, true);
    const attempts = slot.kind === 'throwRetry' ? 2 : 1;
    const flags = failed.map((e) => e.willRetry);
    const wanted = Array.from({ length: attempts }, (_, i) => i < attempts - 1);
    if (JSON.stringify(flags) !== JSON.stringify(wanted)) v.push(`${where}: tool_call_failed willRetry flags ${JSON.stringify(flags)}, expected ${JSON.stringify(wanted)}`);
    return;
  }
  if (hangsUntilCancel(slot.kind)) return void v.push(`${where}: a call that only ends on cancel completed with ${JSON.stringify(out)}`);
  switch (slot.kind) {
    case 'errResult':
      return expect(`err:${slot.n}`, true, true);
    case 'hangTimeout':
      return expect(`Tool error: tool 'work_timeout' timed out after ${s.toolTimeoutMs} ms`, true, true);
    case 'huge':
      expect(truncated(slot.huge!, s.maxOutputChars), false, true);
      if (done.result !== undefined) v.push(`${where}: a truncated result still carries the raw value`);
      return;
    case 'unknown':
      if (!out.startsWith(`Tool error: unknown tool '${slot.tool}'`) || !done.isError) v.push(`${where}: unknown tool gave ${JSON.stringify(out)}`);
      return;
    case 'badJson':
    case 'nonObject':
    case 'schemaInvalid':
      if (!out.startsWith('Tool error: ') || !done.isError) v.push(`${where}: bad arguments gave ${JSON.stringify(out)} (isError ${done.isError})`);
      if (slot.kind === 'schemaInvalid' && !out.startsWith(`Tool error: Invalid arguments for tool '${slot.tool}'`)) v.push(`${where}: schema-invalid arguments gave ${JSON.stringify(out)}`);
      return;
    case 'handoff':
      return checkHandoff(f, slot, where, done, v);
    case 'sub':
      return checkSubCall(f, slot, where, done, v);
  }
}

/** Only the first handoff of a reply that got through preflight transfers; later ones are refused. */
function checkHandoff(f: Facts, slot: SlotPlan, where: string, done: Completed, v: string[]): void {
  const agent = f.record.plan.agents.get(slot.agent)!;
  const target = agent.handoff!.name;
  const earlier = agent.replies[slot.reply]!.slice(0, slot.index).filter((c) => c.kind === 'handoff');
  const earlierWon = earlier.some((c) => {
    const e = f.record.events.find((x): x is Completed => x.type === 'tool_call_completed' && x.call.arguments === c.args);
    return e?.output.startsWith('Transferred to ');
  });
  const expected = earlierWon
    ? `Handoff not performed: this turn already transferred to '${target}'. Only the first handoff in a turn takes effect.`
    : `Transferred to ${target} (r${slot.n})`;
  if (done.output !== expected) v.push(`${where}: handoff gave ${JSON.stringify(done.output)}, expected ${JSON.stringify(expected)}`);
}

/** An agent-as-tool call reports its sub-run: that run's output, or its failure as a tool error. */
function checkSubCall(f: Facts, slot: SlotPlan, where: string, done: Completed, v: string[]): void {
  const name = slot.sub!.name;
  const runs = [...f.runs.values()].filter((r) => r.started?.agent === name && r.started.path.length > 1);
  if (runs.length !== 1) return void v.push(`${where}: ${runs.length} sub-runs of ${name}, expected 1 (result ${JSON.stringify(done.output)})`);
  const run = runs[0]!;
  const path = [...done.path, name].join('>');
  if (run.started!.path.join('>') !== path) v.push(`${where}: sub-run path ${run.started!.path.join('>')}, expected ${path}`);
  if (run.runId === done.runId) v.push(`${where}: the sub-run has its parent's run id ${run.runId}`);
  if (!run.terminal) return void v.push(`${where}: completed with ${JSON.stringify(done.output)} but its sub-run ${run.runId} never ended`);
  if (run.terminalIndex > f.index.get(done)!) v.push(`${where}: completed before its sub-run ended`);
  if (run.terminal.type === 'run_completed') {
    if (done.output !== run.terminal.output || done.isError) v.push(`${where}: sub-run completed with ${JSON.stringify(run.terminal.output)}, the call reported ${JSON.stringify(done.output)}`);
  } else {
    const expected = `Tool error: agent '${name}' failed: ${run.terminal.error.message}`;
    if (done.output !== expected || !done.isError) v.push(`${where}: sub-run failed (${run.terminal.error.message}), the call reported ${JSON.stringify(done.output)}, expected ${JSON.stringify(expected)}`);
  }
}

/** README: keep head = max(1, floor(limit·0.8)) and tail = limit − head code points around a marker. */
export function truncated(text: string, limit: number): string {
  const points = Array.from(text);
  if (points.length <= limit) return text;
  const head = Math.max(1, Math.floor(limit * 0.8));
  const tail = limit - head;
  const fmt = (x: number) => x.toLocaleString('en-US');
  return `${points.slice(0, head).join('')}\n\n[... tool output truncated: kept ${fmt(limit)} of ${fmt(points.length)} chars ...]\n\n${tail > 0 ? points.slice(points.length - tail).join('') : ''}`;
}
