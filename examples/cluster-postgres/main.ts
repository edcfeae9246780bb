// A cluster on one PostgreSQL database: a server node (`troupe serve --workers external`)
// and two `troupe worker` processes. Four runs spread over both workers; worker A is killed
// while its runs wait for approvals, and worker B takes them over from their logs.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { TroupeClient, type RunEventJson, type RunStream } from './client.js';
import { troupe } from './processes.js';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('Set DATABASE_URL to a PostgreSQL database, e.g. DATABASE_URL=postgres://postgres:secret@127.0.0.1:5432/troupe npm start');
  process.exit(2);
}
const db = ['--db', url, '--schema', process.env.TROUPE_SCHEMA ?? 'troupe_example'];
const token = randomBytes(16).toString('hex');
rmSync(new URL('./.data/', import.meta.url), { recursive: true, force: true });

const migrate = troupe(['db', 'migrate', ...db]);
if ((await migrate.exited) !== 0) throw new Error(migrate.output());
console.log('database migrated');

const server = troupe(['serve', ...db, '--workers', 'external', '--agents', './agents.ts', '--port', '0', '--token', token, '--inspect', 'off']);
const [, serverUrl] = await server.waitFor(/troupe server listening on (http:\/\/\S+)/);
const api = new TroupeClient(serverUrl!, token);
// A short lease, so that a dead worker's runs move on within seconds (default 30 s).
const worker = (name: string) => troupe(['worker', ...db, '--agents', './agents.ts', '--concurrency', '2', '--lease-ttl', '2000', '--poll', '200'], { WORKER_NAME: name });
const workerA = worker('A');
await workerA.waitFor(/^troupe worker worker:/m);
console.log('server node and worker A up');

const isType = (type: string) => (event: RunEventJson) => event.type === type;
const runs = new Map<string, RunStream>();
/** Starts a run through the server and waits until its `pack` ran and its `ship` waits for approval. */
async function order(name: string): Promise<void> {
  const run = await api.start('warehouse', `Pack and ship ${name}.`);
  runs.set(name, run);
  const packed = await run.next((e) => e.type === 'tool_call_completed');
  await run.next(isType('approval_required'));
  console.log(`${name}: ${String(packed.output)}; ship waits for approval`);
}
/** Approves the ship call a run waits for (asked after event `from`) and waits for the run's end. */
async function approve(name: string, from = 0): Promise<void> {
  const run = runs.get(name)!;
  const asked = await run.next(isType('approval_required'), from);
  await api.approve(String(asked.approvalId));
  const done = await run.next(isType('run_completed'), from);
  console.log(`${name} completed: ${String(done.output)}`);
}

// Worker A takes the first two runs; with concurrency 2 it is then full, so the next two go to B.
await order('order-1');
await order('order-2');
const workerB = worker('B');
await workerB.waitFor(/^troupe worker worker:/m);
console.log('worker B up');
await order('order-3');
await order('order-4');

await approve('order-3');
await approve('order-4');

const seen = new Map([...runs].map(([name, run]) => [name, run.events.length]));
workerA.kill('SIGKILL');
console.log(`worker A killed (${await workerA.exited}) while order-1 and order-2 wait for approval`);
// Its leases expire (2 s); worker B claims the runs and resumes them from their logs: pack is not run again,
// the approval is asked again, under the same id, and the server's streams go on with B's events.
for (const name of ['order-1', 'order-2']) {
  await runs.get(name)!.next(isType('approval_required'), seen.get(name));
  console.log(`${name}: worker B took over; ship waits for approval again`);
}
await approve('order-1', seen.get('order-1'));
await approve('order-2', seen.get('order-2'));

const executions = readFileSync(new URL('./.data/executions.log', import.meta.url), 'utf8').trim().split('\n').sort();
console.log(`tool executions (${executions.length}, one per call):`);
for (const line of executions) console.log(`  ${line}`);

for (const child of [server, workerB]) child.kill('SIGTERM');
await Promise.all([server.exited, workerB.exited]);
console.log('server node and worker B stopped');
