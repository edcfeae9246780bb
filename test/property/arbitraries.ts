/**
 * What fast-check generates (and shrinks): scenarios of agents whose scripted replies are
 * batches of calls of every kind. A profile weighs the kinds, call ids and approval plans:
 * `mixed` covers everything, `tree` concentrates on nested sub-runs that reuse the parent's
 * call ids and on approvals waiting in several runs of the tree at once.
 */
import fc from 'fast-check';
import type { AgentSpec, CallKind, CallSpec, ConsumerPlan, GatePlan, HandlerPlan, NeedsAnswer, ResolverPlan, Scenario } from './scenario.js';

export interface Profile {
  readonly kinds: Readonly<Partial<Record<CallKind, number>>>;
  readonly ids: readonly string[];
  readonly consumer: Readonly<Record<ConsumerPlan, number>>;
  readonly handler: Readonly<Record<HandlerPlan, number>>;
  readonly maxDepth: number;
  readonly resolverDelayMaxMs: number;
}

export const MIXED: Profile = {
  kinds: {
    ok: 8, okString: 2, slow: 3, mail: 1, progress: 1, errResult: 1, throw: 3, retryOk: 1, failOnce: 1, throwRetry: 1,
    hang: 2, hangTimeout: 3, huge: 2, unknown: 2, badJson: 2, nonObject: 2, schemaInvalid: 2,
    barrier: 3, barrierSlow: 2, barrierThrow: 1, barrierHang: 1, gated: 7, gatedAlways: 3, gatedBarrier: 2, handoff: 3, sub: 4,
  },
  ids: ['c1', 'c2', 'c1', 'c3', ''],
  consumer: { evApprove: 1, evReject: 1, evRejectReason: 1, handleApprove: 1, handleReject: 1, ignore: 4 },
  handler: { allow: 1, true: 1, deny: 1, false: 1, throw: 1, weird: 1, ask: 3 },
  maxDepth: 2,
  resolverDelayMaxMs: 2,
};

export const TREE: Profile = {
  kinds: { ok: 3, slow: 3, barrier: 2, barrierSlow: 2, hang: 1, hangTimeout: 1, throw: 1, unknown: 1, gated: 3, gatedAlways: 5, gatedBarrier: 3, handoff: 1, sub: 7 },
  ids: ['c1', 'c1', 'c2', ''],
  consumer: { evApprove: 1, evReject: 1, evRejectReason: 0, handleApprove: 1, handleReject: 1, ignore: 6 },
  handler: { allow: 1, true: 0, deny: 1, false: 0, throw: 1, weird: 1, ask: 8 },
  maxDepth: 3,
  resolverDelayMaxMs: 6,
};

const weighted = <T>(weights: Readonly<Record<string, number>>): fc.Arbitrary<T> =>
  fc.oneof(...Object.entries(weights).filter(([, w]) => w > 0).map(([value, weight]) => ({ weight, arbitrary: fc.constant(value as T) })));

function gateArb(profile: Profile): fc.Arbitrary<GatePlan> {
  return fc.record({
    needs: fc.constantFrom<NeedsAnswer>(true, true, 'yes', 1, 'obj', false, 0, '', 'throw'),
    consumer: weighted<ConsumerPlan>(profile.consumer),
    handler: weighted<HandlerPlan>(profile.handler),
    asyncHandler: fc.boolean(),
    resolver: fc.constantFrom<ResolverPlan>('approveById', 'rejectById', 'approveByCallId', 'rejectByCallId', 'approveByRunCall', 'releaseTrue', 'releaseFalse', 'none'),
    resolverDelayMs: fc.integer({ min: 0, max: profile.resolverDelayMaxMs }),
    slowBody: fc.boolean(),
  });
}

function callArb(profile: Profile, depth: number, allowSub: boolean): fc.Arbitrary<CallSpec> {
  const id = fc.constantFrom(...profile.ids);
  const gate = gateArb(profile);
  const extra = (kind: CallKind): fc.Arbitrary<CallSpec> | undefined => {
    switch (kind) {
      case 'gated':
      case 'gatedAlways':
      case 'gatedBarrier':
        return fc.record({ kind: fc.constant(kind), id, gate });
      case 'huge':
        return fc.record({ kind: fc.constant(kind), id, hugeLen: fc.integer({ min: 130, max: 2500 }), emoji: fc.boolean() });
      case 'sub':
        if (!allowSub || depth >= profile.maxDepth) return undefined;
        return fc.record(
          { kind: fc.constant(kind), id, sub: agentArb(profile, depth + 1), subMaxTurns: fc.integer({ min: 1, max: 3 }) },
          { requiredKeys: ['kind', 'id', 'sub'] },
        );
      default:
        return fc.record({ kind: fc.constant(kind), id });
    }
  };
  const options: fc.WeightedArbitrary<CallSpec>[] = [];
  for (const [kind, weight] of Object.entries(profile.kinds) as [CallKind, number][]) {
    const arbitrary = extra(kind);
    if (arbitrary && weight > 0) options.push({ weight, arbitrary });
  }
  return fc.oneof(...options);
}

/** An agent's script: batches of calls (each batch one model reply), then a final text; maybe a handoff target. */
export function agentArb(profile: Profile, depth: number): fc.Arbitrary<AgentSpec> {
  const maxTurns = depth === 0 ? 3 : 2;
  const maxCalls = depth === 0 ? 5 : 3;
  const turns = fc.array(fc.array(callArb(profile, depth, true), { minLength: 1, maxLength: maxCalls }), { minLength: depth === 0 ? 1 : 0, maxLength: maxTurns });
  const target = fc.record({ turns: fc.array(fc.array(callArb(profile, profile.maxDepth, false), { minLength: 1, maxLength: 3 }), { maxLength: 2 }) });
  return fc.record({ turns, handoff: target }, { requiredKeys: ['turns'] });
}

/** `arb` in about `present` of `present + absent` scenarios, else absent (undefined). */
function rare<T>(arb: fc.Arbitrary<T>, present: number, absent: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: present, arbitrary: arb });
}

/** Drops undefined keys, so counterexamples print only what the scenario uses. */
function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/**
 * The same call id waiting in two runs at once: the root's reply starts with a sub-run whose
 * first reply asks for a gated call, then asks for a gated call itself, both under `id` and
 * both left to an "ask" handler, so a bare call id is ambiguous while both wait.
 */
function sameIdTwice(profile: Profile): fc.Arbitrary<(root: AgentSpec) => AgentSpec> {
  const askGate = gateArb(profile).map((g): GatePlan => ({ ...g, needs: true, consumer: 'ignore', handler: 'ask' }));
  return fc
    .record({ id: fc.constantFrom('c1', 'c2'), child: agentArb(profile, 1), childGate: askGate, rootGate: askGate })
    .map(({ id, child, childGate, rootGate }) => (root: AgentSpec): AgentSpec => {
      const childTurns = [[{ kind: 'gatedAlways' as const, id, gate: childGate }, ...(child.turns[0] ?? [])], ...child.turns.slice(1)];
      const prefix: CallSpec[] = [
        { kind: 'sub', id, sub: { ...child, turns: childTurns } },
        { kind: 'gatedAlways', id, gate: rootGate },
      ];
      const [first = [], ...rest] = root.turns;
      return { ...root, turns: [[...prefix, ...first], ...rest] };
    });
}

export function scenarioArb(profile: Profile): fc.Arbitrary<Scenario> {
  const base = baseScenarioArb(profile);
  if (profile !== TREE) return base;
  return fc
    .tuple(base, fc.option(sameIdTwice(profile), { freq: 2, nil: undefined }))
    .map(([s, inject]) => (inject ? { ...s, handler: true, root: inject(s.root) } : s));
}

function baseScenarioArb(profile: Profile): fc.Arbitrary<Scenario> {
  return fc
    .record({
      root: agentArb(profile, 0),
      handler: profile === TREE ? fc.constantFrom(true, true, true, false) : fc.boolean(),
      maxTurns: rare(fc.integer({ min: 1, max: 4 }), 1, 6),
      maxToolCalls: rare(fc.integer({ min: 1, max: 8 }), 1, 3),
      maxTotalTokens: rare(fc.integer({ min: 5, max: 150 }), 1, 7),
      approvalTimeoutMs: rare(fc.integer({ min: 3, max: 15 }), 1, 3),
      cancel: rare(
        fc.record({
          atEvent: fc.integer({ min: -1, max: 60 }),
          mode: fc.constantFrom('sync' as const, 'microtask' as const, 'timer' as const),
          via: fc.constantFrom('handle' as const, 'handle' as const, 'signal' as const),
        }),
        2,
        3,
      ),
      runIdOption: fc.boolean(),
      earlyResult: fc.boolean(),
      retries: fc.integer({ min: 0, max: 19 }).map((x) => x === 0),
      toolTimeoutMs: fc.integer({ min: 2, max: 8 }),
      maxOutputChars: fc.integer({ min: 8, max: 120 }),
    })
    .map((s) => compact(s) as Scenario);
}
