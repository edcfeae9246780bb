/**
 * Orchestration overhead on the scripted model (no I/O, no-op tools).
 *   W1: one turn of 100 no-op tool calls → µs per call
 *   W3: 200 turns of one call each     → µs per turn, turns 1–20 vs 181–200
 *   floor: a bare Promise.all over the same 100 no-op functions
 * Run: npm run bench   (plain node conditions, i.e. XState's production build)
 */
import { z } from 'zod';
import { createActor, type ActorLogic, type AnyActorRef } from 'xstate';
import { Agent, Runner, tool } from '../src/index.js';
import { ScriptedModel, batch, call, text } from '../src/entry/testing.js';

const noop = tool({ name: 'noop', description: 'Does nothing.', parameters: z.object({}), execute: () => 'ok' });

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function w1(calls: number): Promise<number> {
  const reply = batch(Array.from({ length: calls }, (_, i) => ['noop', {}, `c${i}`] as const));
  const model = new ScriptedModel([], { record: false });
  const agent = new Agent({ name: 'w1', model, tools: [noop] });
  // The model cost (two scripted replies) is measured separately and subtracted.
  model.push(reply, text('done'));
  const start = performance.now();
  await Runner.run(agent, 'go');
  return performance.now() - start;
}

async function emptyRun(): Promise<number> {
  const model = new ScriptedModel([call('noop', {}, 'c0'), text('done')], { record: false });
  const agent = new Agent({ name: 'w0', model, tools: [noop] });
  const start = performance.now();
  await Runner.run(agent, 'go');
  return performance.now() - start;
}

async function w3(turns: number): Promise<number[]> {
  const model = new ScriptedModel([], { record: false });
  for (let i = 0; i < turns; i++) model.push(call('noop', {}, `t${i}`));
  model.push(text('done'));
  const agent = new Agent({ name: 'w3', model, tools: [noop] });
  const stamps: number[] = [];
  const handle = Runner.stream(agent, 'go', { maxTurns: turns + 1 });
  for await (const event of handle) if (event.type === 'turn_started') stamps.push(performance.now());
  stamps.push(performance.now());
  return stamps.slice(1).map((t, i) => t - stamps[i]!);
}

async function floor(calls: number): Promise<number> {
  const fns = Array.from({ length: calls }, () => async () => 'ok');
  const start = performance.now();
  await Promise.all(fns.map((fn) => fn()));
  return performance.now() - start;
}

/**
 * The least one XState actor per call can cost: a parent with a plain transition function
 * creates N trivial children, each settles through one event and is relayed back as done.
 */
async function actorFloor(calls: number): Promise<number> {
  type S = { status: string; output: unknown; error: unknown };
  // Loosely typed on purpose: a minimal hand-written logic, as small as XState allows.
  const child: ActorLogic<any, any, any> = {
    transition: (snap: S, event: { type: string }) => (event.type === 'settled' ? { status: 'done', output: 'ok', error: undefined } : snap),
    start: (_snap: S, { self }: { self: unknown }) => void Promise.resolve().then(() => (self as AnyActorRef).send({ type: 'settled' })),
    getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined }),
    getPersistedSnapshot: (snap: S) => snap as never,
  };
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  let left = calls;
  const parent: ActorLogic<any, any, any> = {
    transition: (snap: S, event: { type: string }, scope: { self: unknown }) => {
      if (event.type === 'go') for (let i = 0; i < calls; i++) createActor(child, { id: `c${i}`, parent: scope.self as AnyActorRef, input: undefined }).start();
      else if (event.type.startsWith('xstate.done.actor.') && --left === 0) finish();
      return snap;
    },
    getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined }),
    getPersistedSnapshot: (snap: S) => snap as never,
  };
  const start = performance.now();
  const root = createActor(parent, { input: undefined }).start() as unknown as AnyActorRef;
  root.send({ type: 'go' });
  await done;
  root.stop();
  return performance.now() - start;
}

const CALLS = 100;
const REPS = Number(process.env.BENCH_REPS ?? 200);

for (let i = 0; i < 50; i++) { await w1(CALLS); await emptyRun(); await floor(CALLS); await actorFloor(CALLS); }
// Five rounds; the spread between rounds shows how noisy this (shared) machine is.
const rounds: number[] = [];
const floors: number[] = [];
const actorFloors: number[] = [];
for (let round = 0; round < 5; round++) {
  const w1Times: number[] = [];
  const oneCallTimes: number[] = [];
  const floorTimes: number[] = [];
  const actorTimes: number[] = [];
  for (let i = 0; i < REPS; i++) {
    w1Times.push(await w1(CALLS));
    oneCallTimes.push(await emptyRun());
    floorTimes.push(await floor(CALLS));
    actorTimes.push(await actorFloor(CALLS));
  }
  actorFloors.push((median(actorTimes) * 1000) / CALLS);
  rounds.push(((median(w1Times) - median(oneCallTimes)) * 1000) / (CALLS - 1));
  floors.push((median(floorTimes) * 1000) / CALLS);
}
console.log(`W1  ${CALLS} no-op calls in one turn: ${median(rounds).toFixed(2)} µs per call (median of 5 rounds; rounds ${rounds.map((r) => r.toFixed(2)).join(' ')})`);
console.log(`    floor, bare Promise.all: ${median(floors).toFixed(2)} µs per call`);
console.log(`    floor, one bare XState actor per call (create, start, settle, done relay): ${median(actorFloors).toFixed(2)} µs per call`);

await w3(200);
const runs = Array.from({ length: 15 }, () => 0);
const early: number[] = [];
const late: number[] = [];
for (const _ of runs) {
  const perTurn = await w3(200);
  early.push(median(perTurn.slice(0, 20)));
  late.push(median(perTurn.slice(180, 200)));
}
const e = median(early) * 1000;
const l = median(late) * 1000;
console.log(`W3  200 turns of one call: turns 1–20 ${e.toFixed(1)} µs/turn, turns 181–200 ${l.toFixed(1)} µs/turn, ratio ${(l / e).toFixed(2)}`);
