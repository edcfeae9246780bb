/**
 * Minimal reproductions of what XState itself costs, with nothing of troupe loaded: the floor
 * under any statechart runtime built on the published xstate package (the one in the
 * project's node_modules, untouched). Run it on each Node:
 *   node bench/peers/xstate-floor.mjs
 *   /path/to/node24 bench/peers/xstate-floor.mjs
 * Each line is CPU µs per operation (median of 5 batches after a warm-up). See README.md,
 * "Where XState is the cost".
 */
import { createRequire } from 'node:module';

const require = createRequire(new URL('../../package.json', import.meta.url));
const { createActor, raise, setup } = require('xstate');

function measure(name, op, n) {
  for (let i = 0; i < n; i++) op();
  const batches = [];
  for (let b = 0; b < 5; b++) {
    const cpu = process.cpuUsage();
    for (let i = 0; i < n; i++) op();
    const used = process.cpuUsage(cpu);
    batches.push((used.user + used.system) / n);
  }
  batches.sort((a, b) => a - b);
  console.log(`${name.padEnd(64)} ${batches[2].toFixed(2).padStart(7)} µs`);
}

// 1. The smallest run: create, start, two events, done (troupe's text-only run has this shape).
const threeStates = setup({}).createMachine({
  id: 'run',
  initial: 'idle',
  states: { idle: { on: { START: 'model' } }, model: { on: { replied: 'done' } }, done: { type: 'final' } },
});
measure('3-state machine: createActor + start + 2 events to final', () => {
  const actor = createActor(threeStates);
  actor.start();
  actor.send({ type: 'START' });
  actor.send({ type: 'replied' });
}, 20_000);

// 2. One event, one microstep, on a started actor (flat and 3 levels deep).
const flat = createActor(setup({}).createMachine({ initial: 'a', states: { a: { on: { go: 'b' } }, b: { on: { go: 'a' } } } })).start();
measure('send: 1 microstep, flat states', () => flat.send({ type: 'go' }), 100_000);
const deep = createActor(setup({}).createMachine({ initial: 'x', states: { x: { initial: 'y', states: { y: { initial: 'a', states: { a: { on: { go: 'b' } }, b: { on: { go: 'a' } } } } } } } })).start();
measure('send: 1 microstep, 3 levels deep', () => deep.send({ type: 'go' }), 100_000);

// 3. What one more step in the same macrostep costs: an eventless transition, a raised event.
const transient = createActor(setup({}).createMachine({ initial: 'a', states: { a: { on: { go: 't' } }, t: { always: 'b' }, b: { on: { go: 'a' } } } })).start();
measure('send: 1 microstep + 1 eventless (always) microstep', () => transient.send({ type: 'go' }), 100_000);
const raised = createActor(setup({}).createMachine({ initial: 'a', states: { a: { on: { go: 'b' } }, b: { entry: raise({ type: 'next' }), on: { next: 'c', go: 'a' } }, c: { on: { go: 'a' } } } })).start();
measure('send: 1 microstep + 1 raised event (entry raise)', () => raised.send({ type: 'go' }), 100_000);

// 4. A child actor per tool call: creating one (custom logic, with a parent) and a done event.
const parent = createActor(setup({}).createMachine({})).start();
const callLogic = { transition: (s) => s, getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined }), getPersistedSnapshot: (s) => s };
measure('createActor(custom logic, { id, parent })', () => createActor(callLogic, { id: 'c', parent }), 100_000);
const finishing = { ...callLogic, transition: () => ({ status: 'done', output: 'ok', error: undefined }) };
measure('child per call: createActor + start + 1 event to done (parent told)', () => {
  const child = createActor(finishing, { id: 'c', parent });
  child.start();
  child.send({ type: 'settled' });
}, 50_000);

console.log(`node ${process.version}, xstate ${require('xstate/package.json').version}`);
