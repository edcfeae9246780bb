import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, createMachine, emit, fromCallback, setup, spawnChild, stopChild } from 'xstate';
import { STATE_NODE_FILES, STEP_FILES, STEP_PATCHES, XSTATE_VERSION, patchXstateSteps } from '../scripts/patch-xstate-steps.mjs';

const xstateDir = dirname(createRequire(import.meta.url).resolve('xstate/package.json'));
const read = (dir: string, name: string): string => readFileSync(join(dir, 'dist', name), 'utf8');
const FILES = [...STEP_FILES, ...STATE_NODE_FILES];

describe('the xstate step patches (scripts/patch-xstate-steps.mjs, run by scripts/patch-xstate.mjs)', () => {
  it('are for the pinned xstate version, and every patch is applied to every build in node_modules', () => {
    expect(XSTATE_VERSION).toBe(JSON.parse(readFileSync(join(xstateDir, 'package.json'), 'utf8')).version);
    const state = STEP_PATCHES.flatMap((p) => p.files.map((f) => [p.name, f, read(xstateDir, f).includes(p.patched)]));
    expect(state.filter(([, , applied]) => !applied)).toEqual([]);
    expect(STEP_PATCHES.map((p) => p.name)).toEqual([
      'getTransitionDomain',
      'removeConflictingTransitions',
      'selectEventlessTransitions',
      'selectEventlessTransitions (conflicts)',
      'getHistoryNodes',
      'createMachineSnapshot value',
      'microstep actions',
      'microstep (collecting executor)',
      'exitStates (nothing to do)',
      'enterStates (nothing to do)',
      'enterStates (completed parallel states)',
      'enterStates (completed parallel states, use)',
      'Actor (empty listener sentinels)',
      'Actor (lazy observers and listeners)',
      'Actor scope (shared defer and stopChild)',
      'Actor scope functions',
      'Actor#subscribe',
      'Actor#on',
      'Actor#_complete (released observers)',
      'Actor#_reportError (released listeners)',
      'Actor#_reportError (released observers)',
      'enterStates (invoke without a spread)',
      'resolveSpawn (children without a spread)',
      'resolveStop (children without a delete)',
      'createSystem (inspected flag)',
      'createSystem#inspect (inspected flag)',
      'createSystem#_relay (inspection event only when inspected)',
      'Actor (created) (inspection event only when inspected)',
      'Actor#update (inspection event only when inspected)',
      'Actor#start (inspection event only when inspected)',
      'macrostep (inspection event only when inspected)',
      'Actor scope (shared actionExecutor, executingCustomAction)',
      'Actor scope functions (actionExecutor, executingCustomAction)',
      'Actor scope (shared actionExecutor, exports.executingCustomAction)',
      'Actor scope functions (actionExecutor, exports.executingCustomAction)',
      'Mailbox (owner instead of a bound function)',
      'Mailbox#flush (owner)',
      'Actor (mailbox)',
      'Actor#_stop (mailbox)',
      'StateNode candidates memo',
      'StateNode#next',
      'StateNode#next (unused actions)',
      'StateNode#next (unused actions push)',
      'StateNode#invoke',
      'StateNode#initial',
    ]);
    // "Already patched" is told by the patched text: it never occurs in the original.
    expect(STEP_PATCHES.filter((p) => p.original.includes(p.patched)).map((p) => p.name)).toEqual([]);
  });

  it('keep history targets meaning the remembered configuration, shallow and deep, on every visit', () => {
    const machine = createMachine({
      id: 'h',
      initial: 'work',
      states: {
        work: {
          initial: 'a',
          states: {
            a: { on: { NEXT: 'b' } },
            b: { initial: 'b1', states: { b1: { on: { DEEPER: 'b2' } }, b2: {} } },
            shallow: { type: 'history' },
            deep: { type: 'history', history: 'deep' },
          },
          on: { PAUSE: '#h.paused' },
        },
        paused: { on: { SHALLOW: '#h.work.shallow', DEEP: '#h.work.deep' } },
      },
    });
    const actor = createActor(machine).start();
    const value = (): string => JSON.stringify(actor.getSnapshot().value);
    const seen: string[] = [];
    for (const type of ['PAUSE', 'DEEP', 'NEXT', 'DEEPER', 'PAUSE', 'SHALLOW', 'DEEPER', 'PAUSE', 'DEEP', 'PAUSE', 'SHALLOW']) {
      actor.send({ type });
      seen.push(`${type} ${value()}`);
    }
    expect(seen).toEqual([
      'PAUSE "paused"',
      'DEEP {"work":"a"}',
      'NEXT {"work":{"b":"b1"}}',
      'DEEPER {"work":{"b":"b2"}}',
      'PAUSE "paused"',
      // Shallow history restores b, entered at its initial child.
      'SHALLOW {"work":{"b":"b1"}}',
      'DEEPER {"work":{"b":"b2"}}',
      'PAUSE "paused"',
      'DEEP {"work":{"b":"b2"}}',
      'PAUSE "paused"',
      'SHALLOW {"work":{"b":"b1"}}',
    ]);
  });

  it('keep eventless transitions: the deepest state first, then its ancestors; conflicting ones in parallel regions resolved in document order', () => {
    const order: string[] = [];
    const machine = setup({
      guards: { flag: ({ context }: { context: { flag: boolean } }) => context.flag },
      actions: { note: (_: unknown, params: { name: string }) => void order.push(params.name) },
    }).createMachine({
      id: 'e',
      context: { flag: false },
      initial: 'p',
      states: {
        p: {
          type: 'parallel',
          // Both regions' eventless transitions leave the parallel state: only the first (document order) is taken.
          states: {
            left: { initial: 'l', states: { l: { on: { GO: 'l2' } }, l2: { always: { target: '#e.leftWon', actions: { type: 'note', params: { name: 'left' } } } } } },
            right: { initial: 'r', states: { r: { on: { GO: 'r2' } }, r2: { always: { target: '#e.rightWon', actions: { type: 'note', params: { name: 'right' } } } } } },
          },
        },
        leftWon: {
          initial: 'inner',
          // The child's own eventless transition is checked before its parent's.
          always: { target: 'end', actions: { type: 'note', params: { name: 'parent' } } },
          states: { inner: { always: { guard: 'flag', target: '#e.end', actions: { type: 'note', params: { name: 'child' } } } } },
        },
        rightWon: {},
        end: { type: 'final' },
      },
    });
    const actor = createActor(machine).start();
    actor.send({ type: 'GO' });
    expect([order, actor.getSnapshot().value, actor.getSnapshot().status]).toEqual([['left', 'parent'], 'end', 'done']);
  });

  it('give each snapshot the state value of its configuration (parallel keys in order), and transitions per event type', () => {
    const machine = createMachine({
      id: 'v',
      type: 'parallel',
      states: {
        x: { initial: 'x1', states: { x1: { on: { A: 'x2' } }, x2: { on: { A: 'x1', B: 'x1' } } } },
        y: { initial: 'y1', states: { y1: { on: { B: 'y2' } }, y2: { on: { B: 'y1' } } } },
      },
    });
    const actor = createActor(machine).start();
    const values: unknown[] = [actor.getSnapshot().value];
    for (const type of ['A', 'B', 'A', 'A', 'B', 'C']) {
      actor.send({ type });
      values.push(actor.getSnapshot().value);
    }
    expect(values.map((v) => JSON.stringify(v))).toEqual([
      '{"x":"x1","y":"y1"}',
      '{"x":"x2","y":"y1"}',
      '{"x":"x1","y":"y2"}',
      '{"x":"x2","y":"y2"}',
      '{"x":"x1","y":"y2"}',
      '{"x":"x1","y":"y1"}',
      '{"x":"x1","y":"y1"}',
    ]);
    expect(actor.getSnapshot().matches({ x: 'x1', y: 'y1' })).toBe(true);
    // A second actor of the machine sees the same values for the same configurations.
    const other = createActor(machine).start();
    other.send({ type: 'A' });
    expect(other.getSnapshot().value).toEqual({ x: 'x2', y: 'y1' });
  });

  it('keep entry and exit actions in order across states that have none, stop invokes on exit, and complete parallel states once', () => {
    const log: string[] = [];
    const note = (name: string) => () => void log.push(name);
    const machine = createMachine({
      id: 'o',
      initial: 'a',
      states: {
        a: {
          entry: note('enter a'),
          exit: note('exit a'),
          initial: 'quiet',
          states: { quiet: { on: { GO: '#o.b.deep.leaf' } } },
        },
        b: {
          initial: 'deep',
          states: {
            deep: {
              initial: 'leaf',
              states: {
                leaf: {
                  entry: note('enter leaf'),
                  invoke: {
                    src: fromCallback(() => {
                      log.push('invoke started');
                      return () => void log.push('invoke stopped');
                    }),
                  },
                  on: { GO: '#o.p' },
                },
              },
            },
          },
        },
        p: {
          type: 'parallel',
          onDone: { target: 'end', actions: note('parallel done') },
          states: {
            x: { initial: 'x1', states: { x1: { on: { X: 'x2' } }, x2: { type: 'final', entry: note('x final') } } },
            y: { initial: 'y1', states: { y1: { on: { Y: 'y2' } }, y2: { type: 'final', entry: note('y final') } } },
          },
        },
        end: { type: 'final', entry: note('end') },
      },
    });
    const actor = createActor(machine).start();
    for (const type of ['GO', 'GO', 'X', 'X', 'Y']) actor.send({ type });
    expect(log).toEqual(['enter a', 'exit a', 'enter leaf', 'invoke started', 'invoke stopped', 'x final', 'y final', 'parallel done', 'end']);
    expect(actor.getSnapshot().status).toBe('done');
  });

  it('keep subscriptions and emitted-event listeners per actor: each actor sees only its own, unsubscribing stops them', () => {
    const machine = setup({ actions: { shout: emit({ type: 'shout' }) } }).createMachine({ initial: 'a', states: { a: { on: { GO: { target: 'b', actions: 'shout' } } }, b: { on: { GO: { target: 'a', actions: 'shout' } } } } });
    const one = createActor(machine).start();
    const two = createActor(machine).start();
    const seen: string[] = [];
    const sub = one.subscribe((s) => seen.push(`one ${String(s.value)}`));
    const heard = one.on('shout', () => seen.push('one shout'));
    two.on('*', (e) => seen.push(`two ${e.type}`));
    one.send({ type: 'GO' });
    two.send({ type: 'GO' });
    sub.unsubscribe();
    heard.unsubscribe();
    one.send({ type: 'GO' });
    const late: string[] = [];
    one.subscribe({ complete: () => late.push('complete') });
    one.stop();
    expect([seen, late]).toEqual([['one shout', 'one b', 'two shout'], ['complete']]);
  });

  it("defer and stop children through each actor's own scope: the invoke stops on exit, then the spawned child by the transition, a stranger's child is refused", () => {
    const log: string[] = [];
    const child = (name: string) => fromCallback(() => () => void log.push(`${name} stopped`));
    const machine = setup({ actors: { worker: child('invoked'), spawned: child('spawned') } }).createMachine({
      initial: 'a',
      states: {
        a: { invoke: { id: 'w', src: 'worker' }, entry: spawnChild('spawned', { id: 's' }), on: { GO: { target: 'b', actions: stopChild('s') } } },
        b: {},
      },
    });
    const one = createActor(machine).start();
    const two = createActor(machine).start();
    const before = Object.keys(one.getSnapshot().children).sort();
    one.send({ type: 'GO' });
    const scope = (two as unknown as { _actorScope: { stopChild(child: unknown): void } })._actorScope;
    const stranger = two.getSnapshot().children.w;
    const foreign = Object.values(one.getSnapshot().children);
    expect(() => (one as unknown as { _actorScope: { stopChild(child: unknown): void } })._actorScope.stopChild(stranger)).toThrow(`Cannot stop child actor w of ${one.id} because it is not a child`);
    scope.stopChild(stranger);
    expect([before, log, foreign, Object.keys(two.getSnapshot().children).sort()]).toEqual([['s', 'w'], ['invoked stopped', 'spawned stopped', 'invoked stopped'], [], ['s', 'w']]);
  });

  describe('patchXstateSteps on a copy', () => {
    let dir: string | undefined;
    afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

    /** A copy of the installed files with every step patch's original text put back. */
    function unpatchedCopy(version = XSTATE_VERSION): string {
      dir = mkdtempSync(join(tmpdir(), 'troupe-xstate-steps-'));
      mkdirSync(join(dir, 'dist'));
      for (const name of FILES) {
        let text = read(xstateDir, name);
        for (const patch of STEP_PATCHES.filter((p) => p.files.includes(name))) text = text.replace(patch.patched, patch.original);
        writeFileSync(join(dir, 'dist', name), text);
      }
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'xstate', version }));
      return dir;
    }
    const expected = (what: string): string[] => FILES.flatMap((f) => STEP_PATCHES.filter((p) => p.files.includes(f)).map((p) => `${f}: ${p.name}: ${what}`));

    it('applies every patch once per file, gives the installed text, and a second run changes nothing', () => {
      const copy = unpatchedCopy();
      expect(FILES.map((f) => STEP_PATCHES.some((p) => p.files.includes(f) && read(copy, f).includes(p.patched)))).toEqual(FILES.map(() => false));
      expect(patchXstateSteps(copy)).toEqual(expected('patched'));
      expect(FILES.map((f) => read(copy, f) === read(xstateDir, f))).toEqual(FILES.map(() => true));
      expect(patchXstateSteps(copy)).toEqual(expected('already patched'));
    });

    it('refuses another xstate version, and a file without an original text, writing nothing', () => {
      const other = unpatchedCopy('5.34.0');
      const before = FILES.map((f) => read(other, f));
      expect(() => patchXstateSteps(other)).toThrow(`patch-xstate-steps: xstate 5.34.0 found, the patches are for ${XSTATE_VERSION} only; review scripts/patch-xstate-steps.mjs`);
      expect(FILES.map((f) => read(other, f))).toEqual(before);
      rmSync(other, { recursive: true, force: true });
      const copy = unpatchedCopy();
      writeFileSync(join(copy, 'dist', STATE_NODE_FILES[2]!), 'changed');
      const untouched = FILES.map((f) => read(copy, f));
      expect(() => patchXstateSteps(copy)).toThrow(`patch-xstate-steps: ${STATE_NODE_FILES[2]} does not hold the original text of 'StateNode candidates memo' exactly once`);
      expect(FILES.map((f) => read(copy, f))).toEqual(untouched);
    });
  });
});
