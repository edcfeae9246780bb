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
 * - createMachineSnapshot: the state value is a function of the active state nodes (in their
 *   order); it is remembered per machine, keyed by the nodes' document order numbers (up to
 *   1,024 configurations per machine, then computed as before). Snapshots of one
 *   configuration then share one value object, which XState never mutates.
 * - StateNode#next: the candidates of an event type are remembered in a Map per state node
 *   instead of under a `candidates-${type}` string key (the same memo, without building a
 *   string, a factory closure and probing a dictionary object per event); the list of the
 *   chosen transition's actions it built and never read is gone.
 * - StateNode#invoke / #initial: the memo is read before its factory closure is built.
 * - microstep: one transition's actions are its own array (read only), not a flatMap copy.
 * - Actor scope: `defer` and `stopChild` are one function each, shared by every actor and
 *   called as methods of the scope (every caller in XState and troupe writes `scope.defer(…)`,
 *   `scope.stopChild(…)`), instead of two closures per actor. `emit` and `actionExecutor`
 *   stay closures: XState destructures the one and swaps the other during a microstep.
 * - Actor: starts with shared empty observer and event-listener collections, replaced by the
 *   actor's own on its first subscribe / on (the only writes); every other use reads, deletes
 *   or clears, which an empty collection answers the same. Most child actors (every tool
 *   call) never get an observer: two collections fewer per actor.
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
`,
    patched: `${MARK} a configuration's state value, remembered per machine.
const stateValuesByRoot = new WeakMap();
function knownStateValue(root, nodes) {
  let byConfiguration = stateValuesByRoot.get(root);
  if (byConfiguration === undefined) {
    byConfiguration = new Map();
    stateValuesByRoot.set(root, byConfiguration);
  }
  let key = '';
  for (const node of nodes) {
    key += node.order + ' ';
  }
  let value = byConfiguration.get(key);
  if (value === undefined) {
    value = getStateValue(root, nodes);
    if (byConfiguration.size < 1024) {
      byConfiguration.set(key, value);
    }
  }
  return value;
}
function createMachineSnapshot(config, machine) {
  return {
    status: config.status,
    output: config.output,
    error: config.error,
    machine,
    context: config.context,
    _nodes: config._nodes,
    value: knownStateValue(machine.root, config._nodes),
`,
  },
  {
    name: 'microstep actions',
    files: STEP_FILES,
    original: `filteredTransitions.flatMap(t => t.actions)`,
    patched: `(filteredTransitions.length === 1 ? filteredTransitions[0].actions : filteredTransitions.flatMap(t => t.actions))`,
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
  {
    name: 'Actor (empty listener sentinels)',
    files: STEP_FILES,
    original: `class Actor {
`,
    patched: `${MARK} every actor starts with these shared empty collections (never written: the first
// subscribe / on replaces them with its own); most child actors never get an observer.
const noObservers = new Set();
const noEventListeners = new Map();
class Actor {
`,
  },
  {
    name: 'Actor (lazy observers and listeners)',
    files: STEP_FILES,
    original: `    this.observers = new Set();
    this.eventListeners = new Map();
`,
    patched: `    ${MARK} made on first use (see noObservers).
    this.observers = noObservers;
    this.eventListeners = noEventListeners;
`,
  },
  {
    name: 'Actor scope (shared defer and stopChild)',
    files: STEP_FILES,
    original: `      defer: fn => {
        this._deferred.push(fn);
      },
      system: this.system,
      stopChild: child => {
        if (child._parent !== this) {
          throw new Error(\`Cannot stop child actor \${child.id} of \${this.id} because it is not a child\`);
        }
        child._stop();
      },
`,
    patched: `      ${MARK} one function each for every actor (called as scope methods, \`this\` is the scope).
      defer: deferOnScope,
      system: this.system,
      stopChild: stopChildOnScope,
`,
  },
  {
    name: 'Actor scope functions',
    files: STEP_FILES,
    original: `const defaultOptions = {
`,
    patched: `${MARK} an actor scope's defer and stopChild, shared by every actor instead of two closures each.
function deferOnScope(fn) {
  this.self._deferred.push(fn);
}
function stopChildOnScope(child) {
  const actor = this.self;
  if (child._parent !== actor) {
    throw new Error(\`Cannot stop child actor \${child.id} of \${actor.id} because it is not a child\`);
  }
  child._stop();
}
const defaultOptions = {
`,
  },
  {
    name: 'Actor#subscribe',
    files: STEP_FILES,
    original: `      this.observers.add(observer);
`,
    patched: `      ${MARK} the actor's own set, made on first subscribe.
      if (this.observers === noObservers) {
        this.observers = new Set();
      }
      this.observers.add(observer);
`,
  },
  {
    name: 'Actor#on',
    files: STEP_FILES,
    original: `      this.eventListeners.set(type, listeners);
`,
    patched: `      ${MARK} the actor's own map, made on first listener.
      if (this.eventListeners === noEventListeners) {
        this.eventListeners = new Map();
      }
      this.eventListeners.set(type, listeners);
`,
  },
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
