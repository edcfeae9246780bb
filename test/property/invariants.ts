/**
 * Run-level invariants of one case: the stream (one terminal event of the root run, last;
 * iteration never throws), result() agreeing with it, runs (unique run ids, one start and at
 * most one end each, nothing after the end), replies (what each scripted model sent is what
 * the run reports) and the allowed failure classes. Call-level checks are in calls.ts.
 */
import { BudgetExceeded, MaxTurnsExceeded, RunCancelled } from '../../src/index.js';
import type { Message, RunEvent, ToolResultMessage } from '../../src/index.js';
import { checkCalls } from './calls.js';
import { describeSettled, sameSettled, type CaseRecord } from './runner.js';
import { hasBudget, type AgentPlan } from './scenario.js';

export type MessageCompleted = Extract<RunEvent, { type: 'message_completed' }>;
type Terminal = Extract<RunEvent, { type: 'run_completed' | 'run_failed' }>;

export interface RunInfo {
  readonly runId: string;
  readonly started?: Extract<RunEvent, { type: 'run_started' }>;
  readonly startIndex: number;
  readonly terminal?: Terminal;
  readonly terminalIndex: number;
}

/** The facts calls.ts builds on, derived from the events once. */
export interface Facts {
  readonly record: CaseRecord;
  readonly runs: ReadonlyMap<string, RunInfo>;
  /** For each agent: the run its replies belong to and its committed replies (message_completed), in order. */
  readonly replies: ReadonlyMap<string, { runId: string | undefined; events: { event: MessageCompleted; index: number }[] }>;
  readonly index: ReadonlyMap<RunEvent, number>;
}

const isTerminal = (e: RunEvent): e is Terminal => e.type === 'run_completed' || e.type === 'run_failed';
const errorText = (e: unknown) => `${(e as Error)?.constructor?.name}: ${(e as Error)?.message}`;

export function checkCase(record: CaseRecord): string[] {
  const v: string[] = [...record.rec.violations];
  const events = record.events;
  if (record.iterationError !== undefined) v.push(`iterating the run handle threw: ${errorText(record.iterationError)}`);
  if (events.length === 0) return [...v, 'the stream yielded no events'];
  const root = record.rootRunId!;
  const index = new Map(events.map((e, i) => [e, i] as const));

  // Exactly one terminal event of the root run, and it is the last event.
  const rootTerminals = events.filter((e) => isTerminal(e) && e.runId === root) as Terminal[];
  if (rootTerminals.length !== 1) v.push(`expected exactly one terminal event of the root run, got ${rootTerminals.length}`);
  const terminal = events[events.length - 1]!;
  if (!isTerminal(terminal) || terminal.runId !== root) v.push(`the last event is ${terminal.type} of run ${terminal.runId}, not the root run's terminal event`);
  if (events[0]!.type !== 'run_started') v.push(`the first event is ${events[0]!.type}, not run_started`);
  if (record.runIdOption !== undefined && root !== record.runIdOption) v.push(`root run id ${root}, but the runId option was ${record.runIdOption}`);

  for (const [i, e] of events.entries()) {
    if (e.path.length === 0 || e.agent !== e.path[e.path.length - 1]) v.push(`event #${i} ${e.type}: agent ${e.agent} is not the end of path ${e.path.join('>')}`);
    if ((e.path.length === 1) !== (e.runId === root)) v.push(`event #${i} ${e.type}: path ${e.path.join('>')} does not fit run ${e.runId} (root ${root})`);
  }

  // result() settles and agrees with the terminal event; a late cancel changes nothing.
  const rootTerminal = rootTerminals[0];
  const settled = record.settled;
  if (rootTerminal && settled) {
    if (rootTerminal.type === 'run_completed') {
      if (!settled.ok || settled.value.output !== rootTerminal.output || settled.value.runId !== root) {
        v.push(`run_completed(${JSON.stringify(rootTerminal.output)}) but result() ${describeSettled(settled)}`);
      }
    } else if (settled.ok || (settled.error !== rootTerminal.error && (settled.error as object)?.constructor !== rootTerminal.error?.constructor)) {
      v.push(`run_failed(${errorText(rootTerminal.error)}) but result() ${describeSettled(settled)}`);
    }
  }
  if (settled && record.settledAfterLateCancel && !sameSettled(settled, record.settledAfterLateCancel)) {
    v.push(`cancel() after the end changed result(): ${describeSettled(settled)} → ${describeSettled(record.settledAfterLateCancel)}`);
  }
  if (record.pendingAtEnd.length) v.push(`approvals still pending after the run ended: ${record.pendingAtEnd.map((a) => a.approvalId).join(', ')}`);

  if (settled?.ok) checkTranscript(settled.value.transcript, v);
  const runs = checkRuns(record, events, v);
  const replies = checkReplies(record, events, runs, v);
  const facts: Facts = { record, runs, replies, index };
  checkFailureClasses(facts, v);
  checkCancelBeforeStart(facts, v);
  checkOutputs(facts, v);
  checkCalls(facts, v);
  return v;
}

/** Every run starts once (unique run ids, sub-runs included), ends at most once, and emits nothing after its end. */
function checkRuns(record: CaseRecord, events: readonly RunEvent[], v: string[]): Map<string, RunInfo> {
  const runs = new Map<string, RunInfo>();
  for (const [i, e] of events.entries()) {
    let info = runs.get(e.runId);
    if (e.type === 'run_started') {
      if (info) v.push(`run id ${e.runId} started twice (path ${e.path.join('>')}; first ${info.started?.path.join('>') ?? 'without run_started'})`);
      else runs.set(e.runId, (info = { runId: e.runId, started: e, startIndex: i, terminalIndex: -1 }));
      continue;
    }
    if (!info) {
      v.push(`event #${i} ${e.type} of run ${e.runId} before that run's run_started`);
      runs.set(e.runId, (info = { runId: e.runId, startIndex: i, terminalIndex: -1 }));
    }
    if (info.terminal) v.push(`event #${i} ${e.type} of run ${e.runId} after that run's ${info.terminal.type}`);
    if (isTerminal(e) && !info.terminal) runs.set(e.runId, { ...info, terminal: e, terminalIndex: i });
  }
  const rootCompleted = runs.get(record.rootRunId!)?.terminal?.type === 'run_completed';
  for (const info of runs.values()) {
    if (rootCompleted && !info.terminal) v.push(`run ${info.runId} (${info.started?.path.join('>')}) never ended, though the root run completed`);
  }
  return runs;
}

/** Each agent serves one run; its committed replies (message_completed) are what its scripted model sent. */
function checkReplies(record: CaseRecord, events: readonly RunEvent[], runs: ReadonlyMap<string, RunInfo>, v: string[]): Facts['replies'] {
  const replies = new Map<string, { runId: string | undefined; events: { event: MessageCompleted; index: number }[] }>();
  for (const agent of record.plan.agents.values()) replies.set(agent.name, { runId: servingRun(record, agent, runs), events: [] });
  for (const [i, e] of events.entries()) {
    if (e.type !== 'message_completed') continue;
    const entry = replies.get(e.agent);
    if (!entry) {
      v.push(`message_completed of unknown agent ${e.agent}`);
      continue;
    }
    if (entry.runId !== undefined && e.runId !== entry.runId) v.push(`agent ${e.agent} replied in run ${e.runId}, expected run ${entry.runId}`);
    entry.events.push({ event: e, index: i });
  }
  for (const agent of record.plan.agents.values()) {
    const model = record.rec.models.get(agent.name)!;
    const sent = model.requests.length;
    const steps = agent.replies.length + 1;
    const committed = replies.get(agent.name)!;
    if (sent > steps) v.push(`agent ${agent.name}'s model was asked ${sent} times, its script has ${steps} replies`);
    const run = committed.runId === undefined ? undefined : runs.get(committed.runId);
    const missing = Math.min(sent, steps) - committed.events.length;
    if (missing < 0) v.push(`agent ${agent.name} has ${committed.events.length} message_completed events but its model sent ${sent} replies`);
    // The last reply may be lost only when its run did not complete (cancelled while the reply streamed).
    if (missing > 1 || (missing === 1 && run?.terminal?.type === 'run_completed')) {
      v.push(`agent ${agent.name}'s model sent ${sent} replies but only ${committed.events.length} were reported (message_completed); its run ${run?.terminal?.type ?? 'did not end'}`);
    }
    committed.events.forEach(({ event }, r) => {
      const planned = agent.replies[r] ?? [];
      const calls = event.message.toolCalls;
      const same =
        calls.length === planned.length &&
        planned.every((slot, j) => calls[j]!.name === slot.tool && calls[j]!.arguments === slot.args && (slot.id === '' ? calls[j]!.id !== '' : calls[j]!.id === slot.id));
      if (!same) v.push(`agent ${agent.name} reply ${r}: message_completed reports calls ${JSON.stringify(calls)}, the model sent ${JSON.stringify(planned.map((s) => [s.tool, s.args, s.id]))}`);
    });
  }
  return replies;
}

/** The run an agent's replies belong to: the root run, a sub-run (its run_started names the agent), or the run that handed off to it. */
function servingRun(record: CaseRecord, agent: AgentPlan, runs: ReadonlyMap<string, RunInfo>): string | undefined {
  if (agent.name === 'Root') return record.rootRunId;
  const owner = [...record.plan.agents.values()].find((a) => a.handoff?.name === agent.name);
  if (owner) return servingRun(record, owner, runs);
  const started = [...runs.values()].filter((r) => r.started?.agent === agent.name && r.started.path.length > 1);
  return started[0]?.runId;
}

/** Failures must have a cause this scenario can produce: its cancel, its budget, its turn limits. */
function checkFailureClasses(f: Facts, v: string[]): void {
  const s = f.record.plan.scenario;
  const rec = f.record.rec;
  const subMaxTurns = new Map<string, number | undefined>();
  for (const a of f.record.plan.agents.values()) for (const sub of a.subs) subMaxTurns.set(sub.agent.name, sub.maxTurns);
  for (const run of f.runs.values()) {
    if (run.terminal?.type !== 'run_failed') continue;
    const error = run.terminal.error;
    const isRoot = run.runId === f.record.rootRunId;
    const allowed =
      (error instanceof RunCancelled && rec.cancelRequested) ||
      (error instanceof BudgetExceeded && hasBudget(s)) ||
      (error instanceof MaxTurnsExceeded && (isRoot ? s.maxTurns !== undefined : subMaxTurns.get(run.started?.agent ?? '') !== undefined));
    if (!allowed) v.push(`run ${run.runId} (${run.terminal.path.join('>')}) failed with ${errorText(error)}, which this scenario cannot cause`);
  }
}

/** docs/architecture.md, "States and transitions" (`run.idle`): a cancel before the first model request means no model request is made, and the run fails with RunCancelled. */
function checkCancelBeforeStart(f: Facts, v: string[]): void {
  const cancel = f.record.plan.scenario.cancel;
  if (cancel?.atEvent !== -1 || cancel.mode !== 'sync') return;
  const asked = [...f.record.rec.models].filter(([, m]) => m.requests.length > 0).map(([name]) => name);
  if (asked.length) v.push(`cancelled before iterating, yet the model of ${asked.join(', ')} was asked`);
  const end = f.runs.get(f.record.rootRunId!)?.terminal;
  if (end?.type !== 'run_failed' || !(end.error instanceof RunCancelled)) v.push(`cancelled before iterating, yet the run ended with ${end?.type ?? 'nothing'}${end?.type === 'run_failed' ? ` (${errorText(end.error)})` : ''}`);
}

/** A completed run's output is the final text of the agent that finished it (the handoff target, if any). */
function checkOutputs(f: Facts, v: string[]): void {
  for (const run of f.runs.values()) {
    const starter = f.record.plan.agents.get(run.started?.agent ?? '');
    if (!starter) continue;
    const handoffs = f.record.events.filter((e): e is Extract<RunEvent, { type: 'handoff_occurred' }> => e.type === 'handoff_occurred' && e.runId === run.runId);
    if (handoffs.length > 1 || (handoffs.length === 1 && !starter.handoff)) v.push(`run ${run.runId}: ${handoffs.length} handoff_occurred events, the scenario allows ${starter.handoff ? 1 : 0}`);
    for (const h of handoffs) if (h.from !== starter.name || h.to !== starter.handoff?.name) v.push(`run ${run.runId}: handoff_occurred from ${h.from} to ${h.to}`);
    if (run.terminal?.type !== 'run_completed') continue;
    const finisher = handoffs.length && starter.handoff ? starter.handoff : starter;
    if (run.terminal.output !== finisher.finalText) v.push(`run ${run.runId} completed with ${JSON.stringify(run.terminal.output)}, expected ${JSON.stringify(finisher.finalText)}`);
    const transferred = f.record.events.some((e) => e.type === 'tool_call_completed' && e.runId === run.runId && e.output.startsWith('Transferred to '));
    if (transferred && !handoffs.length) v.push(`run ${run.runId} completed after a "Transferred to" result without handoff_occurred`);
  }
}

/** Results pair with calls by call id: after each assistant message, one tool message per call (duplicates counted). */
function checkTranscript(transcript: unknown, v: string[]): void {
  if (!Array.isArray(transcript)) return void v.push(`result().transcript is not an array`);
  const messages = transcript as Message[];
  messages.forEach((m, i) => {
    if (m.role !== 'assistant') return;
    const next = messages.findIndex((x, j) => j > i && x.role === 'assistant');
    const results = messages.slice(i + 1, next === -1 ? undefined : next).filter((x): x is ToolResultMessage => x.role === 'tool');
    const wanted = m.toolCalls.map((c) => c.id).sort();
    const got = results.map((r) => r.callId).sort();
    if (JSON.stringify(wanted) !== JSON.stringify(got)) v.push(`transcript: assistant message #${i} asked for calls ${JSON.stringify(wanted)}, results follow for ${JSON.stringify(got)}`);
  });
}
