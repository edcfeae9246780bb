/**
 * The Actor part of troupe's xstate 5.33.3 step patches (scripts/patch-xstate-steps.mjs lists
 * them with the others; scripts/patch-xstate.mjs applies them). Every run creates a root actor
 * and two children, and every tool call one more, so what an actor costs to make and to drop
 * is paid per run and per call. Each patch keeps XState's behaviour exactly:
 *
 * - Actor scope: `defer`, `stopChild` and `actionExecutor` are one function each, shared by
 *   every actor and called as methods of the scope (every caller in XState and troupe writes
 *   `scope.defer(…)`, `scope.stopChild(…)`, `scope.actionExecutor(…)`; the microstep that swaps
 *   in its collecting executor calls the saved one with the scope as `this`), instead of three
 *   closures per actor (the executor and the mailbox patches are in
 *   scripts/patch-xstate-executor.mjs). `emit` stays a closure: XState's callback and observable
 *   actors destructure it.
 * - Actor: starts with shared empty observer and event-listener collections, replaced by the
 *   actor's own on its first subscribe / on (the only writes). Most child actors (every tool
 *   call) never get an observer: two collections fewer per actor.
 * - Actor (released observers): where XState cleared them when the actor completes or fails,
 *   the actor goes back to the shared empty ones instead. Clearing the shared ones was a
 *   no-op in meaning but not in memory: V8's Set/Map `clear()` allocates a new table and links
 *   the old one to it, so a long-lived empty collection cleared per actor chains every new
 *   table to an old one, and each survives the young-generation GC until a full GC (about
 *   280 bytes per clear, measured with test/fixtures/actor-retention.mjs).
 * - resolveStop (children): the children without the stopped one are copied key by key
 *   instead of spread and then deleted from (a delete makes V8 turn the copy into a slow
 *   dictionary object; each run stops two children at its end, each tool call one).
 * - Inspection events: the system keeps whether anyone inspects it (`_inspected`, set by
 *   `inspect` and its unsubscribe), and each of the six places that sends an inspection event
 *   builds it only then (five patched in place, the action executor's in its shared function). XState's `_sendInspectionEvent` dropped an event nobody listened to,
 *   but every action, relayed event, snapshot, actor and macrostep built one first (a few
 *   percent of W4's time, within the noise of one measurement; troupe's inspector and tracing
 *   still get every event).
 * - enterStates (invoke) and resolveSpawn (children): two object spreads of the form
 *   `{ ...a, key: value }`, with a key `a` does not have, become a plain object with the fields
 *   spawnChild reads and an Object.assign. On Node 20 that spread form keeps what it copies
 *   alive past young-generation GCs (measured in a text-only run: about 500 bytes per run for
 *   its two invokes), which promotes a finished run into the old generation.
 */

import { executorPatches } from './patch-xstate-executor.mjs';

/** The Actor patches for the step files `files`, each commented with `mark`. */
export const actorPatches = (files, mark) => {
  /** One place that sends an inspection event: `system` (as written there) builds it only when inspected. */
  const inspectedOnly = (where, indent, system, type) => ({
    name: `${where} (inspection event only when inspected)`,
    files,
    original: `${indent}${system}._sendInspectionEvent({\n${indent}  type: '${type}',\n`,
    patched: `${indent}if (${system}._inspected) ${system}._sendInspectionEvent({\n${indent}  type: '${type}',\n`,
  });
  return [
  {
    name: 'Actor (empty listener sentinels)',
    files,
    original: `class Actor {
`,
    patched: `${mark} every actor starts with these shared empty collections (never written: the first
// subscribe / on replaces them with its own); most child actors never get an observer.
const noObservers = new Set();
const noEventListeners = new Map();
class Actor {
`,
  },
  {
    name: 'Actor (lazy observers and listeners)',
    files,
    original: `    this.observers = new Set();
    this.eventListeners = new Map();
`,
    patched: `    ${mark} made on first use (see noObservers).
    this.observers = noObservers;
    this.eventListeners = noEventListeners;
`,
  },
  {
    name: 'Actor scope (shared defer and stopChild)',
    files,
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
    patched: `      ${mark} one function each for every actor (called as scope methods, \`this\` is the scope).
      defer: deferOnScope,
      system: this.system,
      stopChild: stopChildOnScope,
`,
  },
  {
    name: 'Actor scope functions',
    files,
    original: `const defaultOptions = {
`,
    patched: `${mark} an actor scope's defer and stopChild, shared by every actor instead of two closures each.
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
    files,
    original: `      this.observers.add(observer);
`,
    patched: `      ${mark} the actor's own set, made on first subscribe.
      if (this.observers === noObservers) {
        this.observers = new Set();
      }
      this.observers.add(observer);
`,
  },
  {
    name: 'Actor#on',
    files,
    original: `      this.eventListeners.set(type, listeners);
`,
    patched: `      ${mark} the actor's own map, made on first listener.
      if (this.eventListeners === noEventListeners) {
        this.eventListeners = new Map();
      }
      this.eventListeners.set(type, listeners);
`,
  },
  {
    name: 'Actor#_complete (released observers)',
    files,
    original: `    this.observers.clear();
    this.eventListeners.clear();
  }
  _reportError(err) {
`,
    patched: `    ${mark} back to the shared empty collections (clearing one allocates a table).
    this.observers = noObservers;
    this.eventListeners = noEventListeners;
  }
  _reportError(err) {
`,
  },
  {
    name: 'Actor#_reportError (released listeners)',
    files,
    original: `      this.eventListeners.clear();
      return;
    }
`,
    patched: `      ${mark} back to the shared empty map.
      this.eventListeners = noEventListeners;
      return;
    }
`,
  },
  {
    name: 'Actor#_reportError (released observers)',
    files,
    original: `    this.observers.clear();
    this.eventListeners.clear();
    if (reportError) {
`,
    patched: `    ${mark} back to the shared empty collections.
    this.observers = noObservers;
    this.eventListeners = noEventListeners;
    if (reportError) {
`,
  },
  {
    name: 'enterStates (invoke without a spread)',
    files,
    original: `      actions.push(spawnChild(invokeDef.src, {
        ...invokeDef,
        syncSnapshot: !!invokeDef.onSnapshot
      }));
`,
    patched: `      ${mark} the fields spawnChild reads, without an object spread.
      actions.push(spawnChild(invokeDef.src, {
        id: invokeDef.id,
        systemId: invokeDef.systemId,
        input: invokeDef.input,
        syncSnapshot: !!invokeDef.onSnapshot
      }));
`,
  },
  {
    name: 'resolveSpawn (children without a spread)',
    files,
    original: `    children: {
      ...snapshot.children,
      [resolvedId]: actorRef
    }
`,
    patched: `    ${mark} Object.assign instead of an object spread.
    children: Object.assign({}, snapshot.children, {
      [resolvedId]: actorRef
    })
`,
  },
  {
    name: 'resolveStop (children without a delete)',
    files,
    original: `  if (resolvedActorRef) {
    children = {
      ...children
    };
    delete children[resolvedActorRef.id];
  }
`,
    patched: `  if (resolvedActorRef) {
    ${mark} a copy without the stopped child (a delete turns the copy into a slow dictionary object).
    const previous = children;
    children = {};
    for (const id of Object.keys(previous)) {
      if (id !== resolvedActorRef.id) {
        children[id] = previous[id];
      }
    }
  }
`,
  },
  {
    name: 'createSystem (inspected flag)',
    files,
    original: `  const system = {
    _snapshot: {
`,
    patched: `  const system = {
    ${mark} whether anyone inspects this system (kept by inspect), read before an event is built.
    _inspected: false,
    _snapshot: {
`,
  },
  {
    name: 'createSystem#inspect (inspected flag)',
    files,
    original: `      inspectionObservers.add(observer);
      return {
        unsubscribe() {
          inspectionObservers.delete(observer);
        }
`,
    patched: `      inspectionObservers.add(observer);
      system._inspected = true;
      return {
        unsubscribe() {
          inspectionObservers.delete(observer);
          system._inspected = inspectionObservers.size > 0;
        }
`,
  },
  inspectedOnly('createSystem#_relay', '      ', 'system', '@xstate.event'),
  inspectedOnly('Actor (created)', '    ', 'this.system', '@xstate.actor'),
  inspectedOnly('Actor#update', '    ', 'this.system', '@xstate.snapshot'),
  inspectedOnly('Actor#start', '    ', 'this.system', '@xstate.event'),
  inspectedOnly('macrostep', '    ', 'actorScope.system', '@xstate.microstep'),
  // The action executor and the mailbox (scripts/patch-xstate-executor.mjs), after the inspection patches.
  ...executorPatches(files, mark),
];
};
