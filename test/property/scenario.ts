/**
 * Random run scenarios for the property tests: the generated shape (see arbitraries.ts) and
 * `plan()`, which turns a generated scenario into concrete agents' scripts with unique
 * argument texts, so that every requested call can be found again in the events.
 */
/** What one requested call is. The tool it targets and its arguments follow from the kind. */
export type CallKind =
  | 'ok' | 'okString' | 'slow' | 'mail' | 'progress' | 'errResult' | 'throw'
  | 'retryOk' | 'failOnce' | 'throwRetry'
  | 'hang' | 'hangTimeout' | 'huge'
  | 'unknown' | 'badJson' | 'nonObject' | 'schemaInvalid'
  | 'barrier' | 'barrierSlow' | 'barrierThrow' | 'barrierHang'
  | 'gated' | 'gatedAlways' | 'gatedBarrier'
  | 'handoff' | 'sub';

/** A `needsApproval` predicate answer; 'throw' makes the predicate throw. */
export type NeedsAnswer = true | 'yes' | 1 | 'obj' | false | 0 | '' | 'throw';
/** What the stream consumer does when it sees the call's approval_required event. */
export type ConsumerPlan = 'evApprove' | 'evReject' | 'evRejectReason' | 'handleApprove' | 'handleReject' | 'ignore';
/** What the agents' approvalHandler answers when the consumer passed the event undecided. */
export type HandlerPlan = 'allow' | 'true' | 'deny' | 'false' | 'throw' | 'weird' | 'ask';
/** Who decides a call the handler answered "ask" for, through handle.approvals. */
export type ResolverPlan =
  | 'approveById' | 'rejectById' | 'approveByCallId' | 'rejectByCallId' | 'approveByRunCall'
  | 'releaseTrue' | 'releaseFalse' | 'none';

export interface GatePlan {
  readonly needs: NeedsAnswer;
  readonly consumer: ConsumerPlan;
  readonly handler: HandlerPlan;
  readonly asyncHandler: boolean;
  readonly resolver: ResolverPlan;
  readonly resolverDelayMs: number;
  readonly slowBody: boolean;
}

export interface CallSpec {
  readonly kind: CallKind;
  readonly id: string;
  readonly gate?: GatePlan;
  readonly sub?: AgentSpec;
  readonly subMaxTurns?: number;
  readonly hugeLen?: number;
  readonly emoji?: boolean;
}

export interface AgentSpec {
  readonly turns: readonly (readonly CallSpec[])[];
  readonly handoff?: AgentSpec;
}

export interface CancelPlan {
  /** Cancel after the consumer has seen event number `atEvent` (0-based); -1 cancels before iterating. */
  readonly atEvent: number;
  readonly mode: 'sync' | 'microtask' | 'timer';
  readonly via: 'handle' | 'signal';
}

export interface Scenario {
  readonly root: AgentSpec;
  readonly handler: boolean;
  readonly maxTurns?: number;
  readonly maxToolCalls?: number;
  /** A token budget: checked at turn start and after each reply (the reply's calls then never run). */
  readonly maxTotalTokens?: number;
  readonly approvalTimeoutMs?: number;
  readonly cancel?: CancelPlan;
  readonly runIdOption: boolean;
  readonly earlyResult: boolean;
  /** Retried failures cost a 100 ms backoff, so they are allowed in only a few scenarios. */
  readonly retries: boolean;
  readonly toolTimeoutMs: number;
  readonly maxOutputChars: number;
}

// ---------------------------------------------------------------------------------------
// Plans: concrete names, tools and argument texts

export interface SlotPlan {
  /** Unique in the scenario; part of the argument text, so the arguments identify the slot. */
  readonly n: number;
  readonly agent: string;
  /** Index of the model reply in the agent's script, and of the call in that reply. */
  readonly reply: number;
  readonly index: number;
  readonly id: string;
  readonly kind: CallKind;
  readonly tool: string;
  readonly args: string;
  readonly gate?: GatePlan;
  /** For 'sub': the agent the call runs as a child run. */
  readonly sub?: AgentPlan;
  readonly huge?: string;
}

export interface AgentPlan {
  readonly name: string;
  readonly depth: number;
  readonly replies: readonly (readonly SlotPlan[])[];
  readonly finalText: string;
  readonly handoff?: AgentPlan;
  readonly subs: readonly { readonly tool: string; readonly agent: AgentPlan; readonly maxTurns?: number }[];
}

export interface Plan {
  readonly scenario: Scenario;
  readonly root: AgentPlan;
  readonly agents: ReadonlyMap<string, AgentPlan>;
  readonly slots: readonly SlotPlan[];
  readonly byArgs: ReadonlyMap<string, SlotPlan>;
  readonly byN: ReadonlyMap<number, SlotPlan>;
}

/** Tools every agent has; their behaviour per call is looked up by the `n` in the arguments. */
export const TOOL_FOR_KIND: Partial<Record<CallKind, string>> = {
  ok: 'work', okString: 'work', slow: 'work', mail: 'work', progress: 'work', errResult: 'work', throw: 'work', hang: 'work',
  badJson: 'work', nonObject: 'work', schemaInvalid: 'work',
  retryOk: 'work_retry', failOnce: 'work_retry', throwRetry: 'work_retry',
  hangTimeout: 'work_timeout', huge: 'work_huge', unknown: 'nope',
  barrier: 'barrier', barrierSlow: 'barrier', barrierThrow: 'barrier', barrierHang: 'barrier',
  gated: 'gated', gatedAlways: 'gated_always', gatedBarrier: 'gated_barrier',
};

export const slug = (name: string) => name.toLowerCase();

/** Whether the scenario sets any budget (tool calls or tokens). */
export const hasBudget = (s: Scenario) => s.maxToolCalls !== undefined || s.maxTotalTokens !== undefined;

export function plan(scenario: Scenario): Plan {
  let nextN = 1;
  let nextAgent = 1;
  const slots: SlotPlan[] = [];
  const agents = new Map<string, AgentPlan>();

  const build = (spec: AgentSpec, name: string, depth: number): AgentPlan => {
    const handoff = spec.handoff ? build(spec.handoff, `A${nextAgent++}`, depth) : undefined;
    const subs: { tool: string; agent: AgentPlan; maxTurns?: number }[] = [];
    const replies = spec.turns.map((batch, reply) =>
      batch.map((call, index): SlotPlan => {
        const n = nextN++;
        let kind = call.kind;
        if (!scenario.retries && kind === 'failOnce') kind = 'ok';
        if (!scenario.retries && kind === 'throwRetry') kind = 'throw';
        if (kind === 'handoff' && !handoff) kind = 'unknown';
        const base = { n, agent: name, reply, index, id: call.id, kind };
        if (kind === 'sub' && call.sub) {
          const child = build(call.sub, `A${nextAgent++}`, depth + 1);
          const tool = `ask_${slug(child.name)}`;
          subs.push({ tool, agent: child, ...(call.subMaxTurns !== undefined ? { maxTurns: call.subMaxTurns } : {}) });
          return { ...base, tool, args: JSON.stringify({ input: `q${n}` }), sub: child };
        }
        if (kind === 'handoff') return { ...base, tool: `transfer_to_${slug(handoff!.name)}`, args: JSON.stringify({ reason: `r${n}` }) };
        const tool = TOOL_FOR_KIND[kind]!;
        const slot = { ...base, tool, args: argsFor(kind, n), ...(call.gate ? { gate: call.gate } : {}) };
        if (kind === 'huge') return { ...slot, huge: hugeText(n, call.hugeLen ?? 200, call.emoji ?? false) };
        return slot;
      }),
    );
    const agentPlan: AgentPlan = { name, depth, replies, finalText: `done:${name}`, subs, ...(handoff ? { handoff } : {}) };
    agents.set(name, agentPlan);
    slots.push(...replies.flat());
    return agentPlan;
  };

  const root = build(scenario.root, 'Root', 0);
  return {
    scenario,
    root,
    agents,
    slots,
    byArgs: new Map(slots.map((s) => [s.args, s])),
    byN: new Map(slots.map((s) => [s.n, s])),
  };
}

function argsFor(kind: CallKind, n: number): string {
  switch (kind) {
    case 'okString': return `{"n":"${n}"}`;
    case 'badJson': return `{"n":${n},`;
    case 'nonObject': return [`[${n}]`, `${n}`, `"n${n}"`][n % 3]!;
    case 'schemaInvalid': return [`{"n":"x${n}"}`, `{"m":${n}}`, `{"n":${n}.5}`][n % 3]!;
    default: return `{"n":${n}}`;
  }
}

function hugeText(n: number, length: number, emoji: boolean): string {
  const unit = emoji ? `😀é${n}-` : `line ${n};`;
  return Array.from({ length: Math.ceil(length / unit.length) + 1 }, (_, i) => `${unit}${i % 10}`).join('');
}

/** Whether the call's body can only end through an abort (cancel) of its signal. */
export const hangsUntilCancel = (kind: CallKind) => kind === 'hang' || kind === 'barrierHang';

/** Kinds rejected in preflight by construction (never started). */
export const PREFLIGHT_KINDS: ReadonlySet<CallKind> = new Set(['unknown', 'badJson', 'nonObject', 'schemaInvalid']);

export const isGatedKind = (kind: CallKind) => kind === 'gated' || kind === 'gatedAlways' || kind === 'gatedBarrier';

/** Whether the tool asks for approval for this slot (the predicate's answer is truthy), or 'throw'. */
export function needsApproval(slot: SlotPlan): boolean | 'throw' {
  if (!isGatedKind(slot.kind)) return false;
  if (slot.kind !== 'gated') return true;
  const needs = slot.gate!.needs;
  return needs === 'throw' ? 'throw' : Boolean(needs);
}

/** Compact description of a plan for failure messages. */
export function describePlan(p: Plan): string {
  const s = p.scenario;
  const lines = [
    `options: ${JSON.stringify({ handler: s.handler, maxTurns: s.maxTurns, maxToolCalls: s.maxToolCalls, maxTotalTokens: s.maxTotalTokens, approvalTimeoutMs: s.approvalTimeoutMs, cancel: s.cancel, runIdOption: s.runIdOption, earlyResult: s.earlyResult, toolTimeoutMs: s.toolTimeoutMs, maxOutputChars: s.maxOutputChars })}`,
  ];
  for (const agent of p.agents.values()) {
    lines.push(`agent ${agent.name}${agent.handoff ? ` (handoff → ${agent.handoff.name})` : ''}:`);
    agent.replies.forEach((reply, r) => {
      lines.push(`  reply ${r}: ${reply.map((c) => `[${c.kind} ${c.tool} id=${JSON.stringify(c.id)} args=${c.args}${c.gate ? ` gate=${JSON.stringify(c.gate)}` : ''}${c.sub ? ` → ${c.sub.name}` : ''}]`).join(' ')}`);
    });
    lines.push(`  then: text ${JSON.stringify(agent.finalText)}`);
  }
  return lines.join('\n');
}
