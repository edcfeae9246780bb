import type { Server } from 'node:http';
import type { Agent } from '../agent.js';
import type { InspectionFeed, InspectMode } from '../inspect/feed.js';
import { RUN_OPTION_KEYS, type RunOptions } from '../runtime/run-options.js';
import { optionKeys } from '../option-keys.js';
import type { CheckpointStore } from '../store/checkpoint-store.js';
import type { ServerCluster } from './cluster-routes.js';
import type { CoverageSource } from './coverage-route.js';
import type { ServerRun } from './runs.js';

/**
 * What `createServer` takes and returns (server.ts serves it): the options, with the list of
 * their keys checked against the interface, and the running server's handle.
 */

/** A registered agent: an instance reused by every run, or a factory called once per run (e.g. scripted models, which are single-use). */
export type AgentSource = Agent | (() => Agent);

/** Options every run started by the server gets. */
export type ServerRunOptions = Omit<RunOptions, 'signal' | 'inspect' | 'runId' | 'approvalTimeoutMs' | 'checkpoint'>;

export interface ServerOptions {
  /** Agents clients may start by name (`POST /api/chat { agent }`). */
  readonly agents: Readonly<Record<string, AgentSource>>;
  /** Bearer token for every `/api/` call; a random one is generated when absent (read it from `server.token`). */
  readonly token?: string;
  /** Default 127.0.0.1 (loopback only). */
  readonly host?: string;
  /** Default 0: an ephemeral port (read `server.port`). */
  readonly port?: number;
  /** Undecided approvals are denied after this long. Default 300,000 ms; `Infinity` waits forever. */
  readonly approvalTimeoutMs?: number;
  /** When XState inspection is attached to runs. Default `on-demand` (only while an inspector is connected). */
  readonly inspect?: InspectMode;
  readonly runOptions?: ServerRunOptions;
  /**
   * Durable run logs: every run started through the server is checkpointed here under its run
   * id (e.g. a SqliteCheckpointStore). Its approvals then survive restarts and wait until
   * decided (unless `approvalTimeoutMs` is set); on start the server resumes stored runs that
   * were running or suspended.
   */
  readonly checkpointStore?: CheckpointStore;
  /**
   * Workers run the runs (`troupe serve --workers external`): this server enqueues them in the
   * cluster's store, streams their events from the bus, and sends approvals, cancels and steers
   * to whichever worker owns a run. It runs nothing itself and never writes a run's log; its
   * run list and details come from `cluster.store` (leave `checkpointStore` unset).
   */
  readonly cluster?: ServerCluster;
  /** Lease time of the server's durable runs (default 30,000 ms): after a crash, a restarted server resumes them once it runs out. */
  readonly leaseMs?: number;
  /** Finished runs kept for GET /api/runs (default 200). */
  readonly maxRuns?: number;
  /** Events kept per run (default 10,000; the oldest text deltas are dropped first, then the oldest events). */
  readonly maxEventsPerRun?: number;
  /**
   * Bytes of event JSON kept per run (default 4 MiB), dropped like `maxEventsPerRun`;
   * terminal and `approval_required` events are always kept. `GET /api/runs/:id` counts
   * what was dropped (`droppedEvents`, `droppedEventBytes`).
   */
  readonly maxEventBytesPerRun?: number;
  /**
   * Host names (or `name:port`) accepted in the `Host` header besides localhost, 127.0.0.1,
   * [::1] and the bound address; any other gets 403 `host_not_allowed` (DNS-rebinding defence).
   */
  readonly allowedHosts?: readonly string[];
  /** The whole request (headers and body) must arrive within this (default 30,000 ms; 0 = no limit), else 408 `request_timeout`. Responses such as SSE streams are not limited. */
  readonly requestTimeoutMs?: number;
  /** The headers must arrive within this (default 30,000 ms, at most `requestTimeoutMs`), else 408 `request_timeout`. */
  readonly headersTimeoutMs?: number;
  /** Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Longest accepted `input` (default 100,000 characters). */
  readonly maxInputChars?: number;
  /** Directory of the built inspector page (default: `dist/inspector`). */
  readonly inspectorDir?: string;
  /**
   * A coverage report for the inspector to lay onto the run chart (`GET /api/coverage`; the
   * page's "coverage" switch): a JSON file of `exploration.coverage` or `recorder.report()`
   * (a path, read at each request), or a function returning a report (live coverage).
   */
  readonly coverage?: CoverageSource;
}

export interface ServerStats {
  readonly runs: number;
  readonly activeRuns: number;
  /** Chat SSE clients attached to runs. */
  readonly chatClients: number;
  readonly inspectorClients: number;
}

export interface TroupeServer {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly token: string;
  /** The page URL with the token in its fragment (never sent to the server by browsers). */
  readonly inspectorUrl: string;
  readonly feed: InspectionFeed;
  /** The underlying node:http server. */
  readonly http: Server;
  stats(): ServerStats;
  /** Runs started through the server (live and recent). */
  run(id: string): ServerRun | undefined;
  /** Stored runs this server resumed when it started (they were running when a process died, or suspended). */
  readonly recovered: readonly string[];
  /**
   * Stops listening, ends streams and ends the live runs, waiting for them (bounded, about
   * 2 s). With a checkpoint store, a run waiting for an approval parks (stored as
   * `suspended`, lease released; the next server on the store resumes it at the same
   * approval); every other live run is cancelled (stored as `cancelled`).
   */
  close(): Promise<void>;
}

export const SERVER_OPTION_KEYS = optionKeys<ServerOptions>({
  agents: true,
  token: true,
  host: true,
  port: true,
  approvalTimeoutMs: true,
  inspect: true,
  runOptions: true,
  checkpointStore: true,
  cluster: true,
  leaseMs: true,
  maxRuns: true,
  maxEventsPerRun: true,
  maxEventBytesPerRun: true,
  allowedHosts: true,
  requestTimeoutMs: true,
  headersTimeoutMs: true,
  maxBodyBytes: true,
  maxInputChars: true,
  inspectorDir: true,
  coverage: true,
});
/** The run options a server may set for its runs (it sets the others itself). */
export const SERVER_RUN_OPTION_KEYS = RUN_OPTION_KEYS.filter((key) => !['signal', 'inspect', 'runId', 'approvalTimeoutMs', 'checkpoint'].includes(key));
