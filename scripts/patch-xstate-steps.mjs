/**
 * troupe's second set of xstate 5.33.3 patches (applied by scripts/patch-xstate.mjs, so by
 * `prepare`): the statechart step algorithm, which every run pays several times per turn.
 * XState recomputes, on every microstep, facts that depend only on the machine definition
 * (a transition's domain, a state's history children, the candidate transitions of an event
 * type) and allocates sets and arrays for the common case of one enabled transition. Each
 * patch below keeps the result exactly as before:
 *
 * - getTransitionDomain: a transition's domain is a function of its source, its targets and
 *   `reenter`, all fixed when the machine is built; it is remembered per transition object
 *   (WeakMap) unless a target is a history state (whose meaning depends on the history value).
 * - removeConflictingTransitions: with fewer than two transitions nothing can conflict; the
 *   loop would return a copy of the input, which is what the shortcut returns.
 * - selectEventlessTransitions: walks a state and its ancestors through `.parent` instead of
 *   building `[state].concat(getProperAncestors(state))` (the same nodes in the same order),
 *   and skips the conflict check for fewer than two enabled transitions (as above).
 * - getHistoryNodes: a state's history children are fixed; remembered per state node.
 * - createMachineSnapshot: the state value and the tag set are functions of the active state
 *   nodes (in their order); they are remembered per machine, keyed by the nodes' document
 *   order numbers (up to 1,024 configurations per machine, then computed as before).
 *   Snapshots of one configuration then share one value object and one tag Set, which XState
 *   never mutates (every snapshot of an assign or a spawn used to build its own Set).
 * - StateNode#next: the candidates of an event type are remembered in a Map per state node
 *   instead of under a `candidates-${type}` string key (the same memo, without building a
 *   string, a factory closure and probing a dictionary object per event); the list of the
 *   chosen transition's actions it built and never read is gone.
 * - StateNode#invoke / #initial: the memo is read before its factory closure is built.
 * - microstep: one transition's actions are its own array (read only), not a flatMap copy.
 * - microstep: the executor that collects a microstep's actions is made as a constant, then
 *   assigned. V8 (Node 20) allocates a closure written as `obj.prop = () => …` directly in
 *   the old generation while the enclosing function is not optimized yet (its parser marks
 *   such closures as long-lived: usually methods put on a prototype); `const f = () => …`
 *   is allocated young. This closure is made per microstep and holds the microstep's actions,
 *   so during the JIT warm-up every run stayed reachable from a dead old object until a full
 *   GC; V8 then saw the run's objects survive and allocated them in the old generation from
 *   then on, for good (allocation-site pretenuring), and every run after that paid for it in
 *   GC: a text-only run cost 40–60 µs instead of about 20 (bench/peers/README.md).
 * - Actor, and the two object spreads of a spawn: scripts/patch-xstate-actor.mjs.
 * - exitStates / enterStates: a state with nothing to run (no exit, entry, initial actions or
 *   invokes) skips the action resolution, which would return the same snapshot; the set of
 *   completed parallel states is made only when one completes.
 *
 * Refuses (throws) on any other xstate version or when a file does not hold an original text
 * exactly once. Idempotent. test/xstate-step-patches.test.ts pins the files, the texts and
 * the behaviour.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { actorPatches } from './patch-xstate-actor.mjs';

export const XSTATE_VERSION = '5.33.3';
/** The builds that define the step algorithm (production and development, CommonJS and ESM). */
export const STEP_FILES = ['raise-9de11213.cjs.js', 'raise-effbee0c.esm.js', 'raise-3e76cf12.development.cjs.js', 'raise-991ac3b2.development.esm.js'];
/** The builds that define StateNode. */
export const STATE_NODE_FILES = ['StateMachine-ad194eaf.cjs.js', 'StateMachine-ae06a22b.esm.js', 'StateMachine-a3dfb12d.development.cjs.js', 'StateMachine-ebb67171.development.esm.js'];

const MARK = '// troupe (scripts/patch-xstate-steps.mjs):';

/** Each patch: the files it applies to, the exact original text (once per file), its replacement. */
export const STEP_PATCHES = [
  {
    name: 'getTransitionDomain',
    files: STEP_FILES,
    original: `function getTransitionDomain(transition, historyValue) {
  const targetStates = getEffectiveTargetStates(transition, historyValue);
`,
    patched: `${MARK} a transition's domain is fixed unless it targets a history state.
const transitionDomains = new WeakMap();
function getTransitionDomain(transition, historyValue) {
  const known = transitionDomains.get(transition);
  if (known !== undefined) {
    return known.domain;
  }
  const domain = computeTransitionDomain(transition, historyValue);
  if (!transition.target || !transition.target.some(isHistoryNode)) {
    transitionDomains.set(transition, {
      domain
    });
  }
  return domain;
}
function computeTransitionDomain(transition, historyValue) {
  const targetStates = getEffectiveTargetStates(transition, historyValue);
`,
  },
  {
    name: 'removeConflictingTransitions',
    files: STEP_FILES,
    original: `function removeConflictingTransitions(enabledTransitions, stateNodeSet, historyValue) {
  const filteredTransitions = new Set();
`,
    patched: `function removeConflictingTransitions(enabledTransitions, stateNodeSet, historyValue) {
  ${MARK} fewer than two transitions cannot conflict.
  if (enabledTransitions.length < 2) {
    return Array.from(enabledTransitions);
  }
  const filteredTransitions = new Set();
`,
  },
  {
    name: 'selectEventlessTransitions',
    files: STEP_FILES,
    original: `    loop: for (const s of [stateNode].concat(getProperAncestors(stateNode, undefined))) {
`,
    patched: `    ${MARK} the state, then its ancestors, without building the list.
    loop: for (let s = stateNode; s; s = s.parent) {
`,
  },
  {
    name: 'selectEventlessTransitions (conflicts)',
    files: STEP_FILES,
    original: `  return removeConflictingTransitions(Array.from(enabledTransitionSet), new Set(nextState._nodes), nextState.historyValue);
`,
    patched: `  ${MARK} fewer than two transitions cannot conflict.
  if (enabledTransitionSet.size < 2) {
    return Array.from(enabledTransitionSet);
  }
  return removeConflictingTransitions(Array.from(enabledTransitionSet), new Set(nextState._nodes), nextState.historyValue);
`,
  },
  {
    name: 'getHistoryNodes',
    files: STEP_FILES,
    original: `function getHistoryNodes(stateNode) {
  return Object.keys(stateNode.states).map(key => stateNode.states[key]).filter(sn => sn.type === 'history');
}
`,
    patched: `${MARK} a state's history children are fixed.
const historyNodesOf = new WeakMap();
function getHistoryNodes(stateNode) {
  let nodes = historyNodesOf.get(stateNode);
  if (nodes === undefined) {
    nodes = Object.keys(stateNode.states).map(key => stateNode.states[key]).filter(sn => sn.type === 'history');
    historyNodesOf.set(stateNode, nodes);
  }
  return nodes;
}
`,
  },
  {
    name: 'createMachineSnapshot value',
    files: STEP_FILES,
    original: `function createMachineSnapshot(config, machine) {
  return {
    status: config.status,
    output: config.output,
    error: config.error,
    machine,
    context: config.context,
    _nodes: config._nodes,
    value: getStateValue(machine.root, config._nodes),
    tags: new Set(config._nodes.flatMap(sn => sn.tags)),
`,
    patched: `${MARK} a configuration's state value and tags, remembered per machine.
const configurationsByRoot = new WeakMap();
// The last answer: a snapshot cloned by an assign or a spawn keeps its node array.
let lastNodes;
let lastKnown;
function knownConfiguration(root, nodes) {
  if (nodes === lastNodes && lastKnown.root === root) {
    return lastKnown;
  }
  let byConfiguration = configurationsByRoot.get(root);
  if (byConfiguration === undefined) {
    byConfiguration = new Map();
    configurationsByRoot.set(root, byConfiguration);
  }
  let key = '';
  for (const node of nodes) {
    key += node.order + ' ';
  }
  let known = byConfiguration.get(key);
  if (known === undefined) {
    known = {
      root,
      value: getStateValue(root, nodes),
      tags: new Set(nodes.flatMap(sn => sn.tags))
    };
    if (byConfiguration.size < 1024) {
      byConfiguration.set(key, known);
    }
  }
  lastNodes = nodes;
  lastKnown = known;
  return known;
}
function createMachineSnapshot(config, machine) {
  const known = knownConfiguration(machine.root, config._nodes);
  return {
    status: config.status,
    output: config.output,
    error: config.error,
    machine,
    context: config.context,
    _nodes: config._nodes,
    value: known.value,
    tags: known.tags,
`,
  },
  {
    name: 'microstep actions',
    files: STEP_FILES,
    original: `filteredTransitions.flatMap(t => t.actions)`,
    patched: `(filteredTransitions.length === 1 ? filteredTransitions[0].actions : filteredTransitions.flatMap(t => t.actions))`,
  },
  {
    name: 'microstep (collecting executor)',
    files: STEP_FILES,
    original: `  const originalExecutor = actorScope.actionExecutor;
  actorScope.actionExecutor = action => {
    actions.push(action);
    originalExecutor(action);
  };
`,
    patched: `  const originalExecutor = actorScope.actionExecutor;
  ${MARK} the closure is made apart from the assignment (see the header).
  const collectingExecutor = action => {
    actions.push(action);
    originalExecutor.call(actorScope, action);
  };
  actorScope.actionExecutor = collectingExecutor;
`,
  },
  {
    name: 'exitStates (nothing to do)',
    files: STEP_FILES,
    original: `    nextSnapshot = resolveActionsAndContext(nextSnapshot, event, actorScope, [...s.exit, ...s.invoke.map(def => stopChild(def.id))], internalQueue, undefined);
`,
    patched: `    ${MARK} a state without exit actions or invokes leaves the snapshot as it is.
    if (s.exit.length !== 0 || s.invoke.length !== 0) {
      nextSnapshot = resolveActionsAndContext(nextSnapshot, event, actorScope, [...s.exit, ...s.invoke.map(def => stopChild(def.id))], internalQueue, undefined);
    }
`,
  },
  {
    name: 'enterStates (nothing to do)',
    files: STEP_FILES,
    original: `    nextSnapshot = resolveActionsAndContext(nextSnapshot, event, actorScope, actions, internalQueue, stateNodeToEnter.invoke.map(invokeDef => invokeDef.id));
`,
    patched: `    ${MARK} a state without entry actions, invokes or initial actions leaves the snapshot as it is.
    if (actions.length !== 0) {
      nextSnapshot = resolveActionsAndContext(nextSnapshot, event, actorScope, actions, internalQueue, stateNodeToEnter.invoke.map(invokeDef => invokeDef.id));
    }
`,
  },
  {
    name: 'enterStates (completed parallel states)',
    files: STEP_FILES,
    original: `  const completedNodes = new Set();
`,
    patched: `  ${MARK} the set of completed parallel states is made when one completes.
  let completedNodes;
`,
  },
  {
    name: 'enterStates (completed parallel states, use)',
    files: STEP_FILES,
    original: `!completedNodes.has(ancestorMarker) && isInFinalState(mutStateNodeSet, ancestorMarker)) {
        completedNodes.add(ancestorMarker);
`,
    patched: `!completedNodes?.has(ancestorMarker) && isInFinalState(mutStateNodeSet, ancestorMarker)) {
        (completedNodes ??= new Set()).add(ancestorMarker);
`,
  },
  ...actorPatches(STEP_FILES, MARK),
  {
    name: 'StateNode candidates memo',
    files: STATE_NODE_FILES,
    original: `const cache = new WeakMap();
`,
    patched: `const cache = new WeakMap();
${MARK} the candidates of an event type, per state node, in a Map.
const candidatesByNode = new WeakMap();
function memoCandidates(stateNode, eventType, fn) {
  let byType = candidatesByNode.get(stateNode);
  if (byType === undefined) {
    byType = new Map();
    candidatesByNode.set(stateNode, byType);
  }
  let candidates = byType.get(eventType);
  if (candidates === undefined) {
    candidates = fn();
    byType.set(eventType, candidates);
  }
  return candidates;
}
`,
  },
  {
    name: 'StateNode#next',
    files: STATE_NODE_FILES,
    original: 'const candidates = memo(this, `candidates-${eventType}`, () =>',
    patched: 'const candidates = candidatesByNode.get(this)?.get(eventType) ?? memoCandidates(this, eventType, () =>',
  },
  {
    name: 'StateNode#next (unused actions)',
    files: STATE_NODE_FILES,
    original: `    const actions = [];
    let selectedTransition;
`,
    patched: `    ${MARK} no list of the chosen transition's actions (it was built and never read).
    let selectedTransition;
`,
  },
  {
    name: 'StateNode#next (unused actions push)',
    files: STATE_NODE_FILES,
    original: `        actions.push(...candidate.actions);
        selectedTransition = candidate;
`,
    patched: `        ${MARK} (no actions list)
        selectedTransition = candidate;
`,
  },
  {
    name: 'StateNode#invoke',
    files: STATE_NODE_FILES,
    original: `    return memo(this, 'invoke', () =>`,
    patched: `    ${MARK} read the memo before building its factory.
    const memoizedInvoke = cache.get(this);
    if (memoizedInvoke !== undefined && 'invoke' in memoizedInvoke) {
      return memoizedInvoke.invoke;
    }
    return memo(this, 'invoke', () =>`,
  },
  {
    name: 'StateNode#initial',
    files: STATE_NODE_FILES,
    original: `    return memo(this, 'initial', () =>`,
    patched: `    ${MARK} read the memo before building its factory.
    const memoizedInitial = cache.get(this);
    if (memoizedInitial !== undefined && 'initial' in memoizedInitial) {
      return memoizedInitial.initial;
    }
    return memo(this, 'initial', () =>`,
  },
];

/**
 * Applies every step patch to the xstate package in `xstateDir`; returns what happened per
 * file and patch. @throws Error on a version or text mismatch, before any file is written.
 */
export function patchXstateSteps(xstateDir) {
  const { version } = JSON.parse(readFileSync(join(xstateDir, 'package.json'), 'utf8'));
  if (version !== XSTATE_VERSION) throw new Error(`patch-xstate-steps: xstate ${version} found, the patches are for ${XSTATE_VERSION} only; review scripts/patch-xstate-steps.mjs`);
  const report = [];
  const writes = [];
  for (const name of [...STEP_FILES, ...STATE_NODE_FILES]) {
    const path = join(xstateDir, 'dist', name);
    const before = readFileSync(path, 'utf8');
    let text = before;
    for (const patch of STEP_PATCHES.filter((p) => p.files.includes(name))) {
      // "Already patched" is read from the patched text, so it must not occur in the original.
      if (patch.original.includes(patch.patched)) throw new Error(`patch-xstate-steps: '${patch.name}' cannot tell a patched file from an original one`);
      if (text.includes(patch.patched)) {
        report.push(`${name}: ${patch.name}: already patched`);
        continue;
      }
      const at = text.indexOf(patch.original);
      if (at < 0 || text.indexOf(patch.original, at + 1) >= 0) throw new Error(`patch-xstate-steps: ${name} does not hold the original text of '${patch.name}' exactly once`);
      text = text.slice(0, at) + patch.patched + text.slice(at + patch.original.length);
      report.push(`${name}: ${patch.name}: patched`);
    }
    if (text !== before) writes.push([path, text]);
  }
  for (const [path, text] of writes) writeFileSync(path, text);
  return report;
}
