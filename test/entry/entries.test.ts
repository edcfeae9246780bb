import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
// dist/ is built by `npm install` / `npm ci` (the prepare script) or `npm run build`.
import { describe, expect, it } from 'vitest';

/** What importing one specifier of the built package loads under plain node (see probe.mjs). */
interface Loaded {
  readonly exports: string[];
  /** This package's files, relative to dist/. */
  readonly files: string[];
  /** Dependencies that were loaded, by package name. */
  readonly packages: string[];
  /** Native addons (.node shared objects) in the process. */
  readonly addons: string[];
}

const probe = fileURLToPath(new URL('./probe.mjs', import.meta.url));
const root = fileURLToPath(new URL('../../', import.meta.url));

async function load(specifier: string, ...args: string[]): Promise<Loaded> {
  const { stdout } = await promisify(execFile)(process.execPath, [probe, specifier, ...args], { cwd: root, encoding: 'utf8' });
  return JSON.parse(stdout) as Loaded;
}

/** Top-level areas of dist/ (a directory or a root file) that some loaded file is in. */
const areas = (loaded: Loaded): string[] => [...new Set(loaded.files.map((file) => file.split('/')[0]!))].sort();

// Where other work changes files inside an area (the runtime, the server, OTel), the area
// list is asserted exactly; the small entries' file lists are asserted exactly.
describe('package entry points (built dist, plain node)', () => {
  it('troupe: the core, with no native module, no server, no MCP or AI SDK code and no test double', async () => {
    const loaded = await load('troupe');
    expect(loaded.exports).toEqual([
      'Agent', 'BudgetExceeded', 'CHECKPOINT_SCHEMA_VERSION', 'ContextOverflowError', 'FINISHED_RUN_STATUSES', 'GuardrailTripped', 'HookError', 'InvalidToolArguments', 'MaxTurnsExceeded',
      'MemoryCheckpointStore', 'MemorySession', 'ModelError', 'OutputValidationError', 'PluginError', 'RUN_STATUSES', 'RunCancelled', 'RunHandle', 'RunLocked', 'RunSuspended', 'Runner', 'SESSION_SCHEMA_VERSION',
      'STORED_RUN_STATUSES', 'ScriptExhausted', 'ToolError', 'ToolTimeout', 'TroupeError', 'UserError', 'WaitTimeout', 'agentAsTool', 'askFormFromTool', 'askFromTool', 'askHuman', 'checkJsonSchema',
      'confirmFromTool', 'customMessage', 'decideWorkspacePolicy', 'exportRun', 'getRunMachine', 'handoff', 'isContextOverflow', 'isCustomMessage', 'isFinished', 'parseRunExport', 'partsText', 'rawTool', 'recallToolResult',
      'tool', 'toolResult', 'waitForEvent', 'waitUntil', 'workspaceTools',
    ]);
    expect(loaded.packages).toEqual(['nanoid', 'xstate', 'zod']);
    expect(loaded.addons).toEqual([]);
    // otel/: the `tracer` run option's code; @opentelemetry/api itself is not loaded.
    expect(areas(loaded)).toEqual([
      'actors', 'agent.js', 'context', 'errors.js', 'handoff', 'index.js', 'machines', 'message-parts.js', 'models', 'option-keys.js', 'otel', 'peers.js', 'plugins', 'rules', 'run-status.js', 'runtime', 'store', 'tools', 'types.js', 'waits',
    ]);
    // Overflow recognition and usage checks: never the ScriptedModel test double.
    expect(loaded.files.filter((file) => file.startsWith('models/'))).toEqual(['models/context-overflow.js', 'models/usage.js']);
    // Lease claims (claim-lease, lease-owner: node:fs reads of /proc) come with durable runs.
    expect(loaded.files.filter((file) => file.startsWith('store/'))).toEqual(['store/checkpoint-store.js', 'store/claim-lease.js', 'store/format.js', 'store/lease-owner.js', 'store/record-checks.js', 'store/session.js']);
  });

  it('troupe/testing: the scripted model, and the explorer with the runtime it drives (no native module, no server)', async () => {
    const loaded = await load('troupe/testing');
    expect(loaded.exports).toEqual([
      'CoverageRecorder', 'ExplorationNondeterminism', 'INVARIANTS', 'PathFailure', 'ReplayMismatch', 'ReplayModel', 'ScriptedModel', 'assertPath', 'batch', 'call', 'coverageTable',
      'describePaths', 'exploreAgent', 'forkOrigin', 'forkRun', 'lintAgent', 'replayModel', 'text', 'transitionKey', 'walkChart',
    ]);
    expect(loaded.packages).toEqual(['nanoid', 'xstate', 'zod']);
    expect(loaded.addons).toEqual([]);
    expect(loaded.files.filter((file) => file.startsWith('models/'))).toEqual(['models/context-overflow.js', 'models/script-steps.js', 'models/scripted.js', 'models/usage.js']);
    expect(areas(loaded)).not.toContain('server');
    expect(areas(loaded)).not.toContain('mcp');
  });

  it('troupe/sqlite: better-sqlite3, whose addon loads when a database opens (which the probe can see)', async () => {
    const loaded = await load('troupe/sqlite');
    expect(loaded.exports).toEqual(['SqliteCheckpointStore', 'SqliteSession']);
    expect(loaded.files).toEqual([
      'entry/sqlite.js', 'errors.js', 'message-parts.js', 'option-keys.js', 'peers.js', 'run-status.js', 'store/checkpoint-store.js', 'store/format.js', 'store/record-checks.js', 'store/session.js',
      'store/sqlite-checkpoint-store.js', 'store/sqlite-session.js', 'store/sqlite.js', 'waits/kinds/records.js',
    ]);
    expect(loaded.packages).toEqual(['better-sqlite3']);
    expect(loaded.addons).toEqual([]);
    // The control for every `addons: []` above and below: an open database shows up.
    expect((await load('troupe/sqlite', '--open-sqlite')).addons).toEqual(['better_sqlite3.node']);
  });

  it('troupe/postgres: pg and the PostgreSQL stores only (no SQLite, no runtime)', async () => {
    const loaded = await load('troupe/postgres');
    expect(loaded.exports).toEqual(['EventsPruned', 'PRUNED_EVENTS_TYPE', 'PostgresCheckpointStore', 'PostgresRunBus', 'PostgresSession', 'RunLocked', 'StoreUnavailable', 'enqueueRun', 'migratePostgres', 'parseDuration', 'pruneEvents']);
    expect(loaded.files).toEqual([
      'entry/postgres.js', 'errors.js', 'message-parts.js', 'option-keys.js', 'peers.js', 'run-status.js', 'store/checkpoint-store.js', 'store/event-retention.js', 'store/format.js', 'store/postgres-bus.js', 'store/postgres-checkpoint-store.js', 'store/postgres-driver.js', 'store/postgres-layout.js',
      'store/postgres-listener.js', 'store/postgres-migrate.js', 'store/postgres-prune.js', 'store/postgres-queue.js', 'store/postgres-session.js', 'store/postgres.js', 'store/record-checks.js', 'store/session.js',
      'waits/kinds/records.js',
    ]);
    // pgpass and split2 load when a connection opens.
    expect(loaded.packages).toEqual(['pg', 'pg-connection-string', 'pg-int8', 'pg-pool', 'pg-protocol', 'pg-types', 'postgres-array', 'postgres-bytea', 'postgres-date', 'postgres-interval', 'xtend']);
    expect(loaded.addons).toEqual([]);
  });

  it('troupe/server: the HTTP server and inspection feed, without SQLite or the demo models', async () => {
    const loaded = await load('troupe/server');
    expect(loaded.exports).toEqual([
      'InspectionFeed', 'UIMessageChunkMapper', 'UI_MESSAGE_STREAM_HEADERS', 'UI_STREAM_DONE_FRAME', 'banner', 'createServer',
      'parentToolCallId', 'serializeRunEvent', 'startDemoServer', 'startWorker', 'toUIMessageStream', 'uiChunkFrame',
    ]);
    expect(loaded.packages).toEqual(['nanoid', 'xstate', 'zod']);
    expect(loaded.addons).toEqual([]);
    // No cli/ and no model: startDemoServer loads the scripted demo when called (models/ holds only the model turn's checks).
    expect(areas(loaded)).toEqual([
      'actors', 'agent.js', 'context', 'entry', 'errors.js', 'handoff', 'inspect', 'machines', 'message-parts.js', 'models', 'option-keys.js', 'otel', 'peers.js', 'plugins', 'rules', 'run-status.js', 'runtime', 'server', 'store', 'tools', 'types.js', 'waits', 'worker',
    ]);
    expect(loaded.files.filter((file) => file.startsWith('models/'))).toEqual(['models/context-overflow.js', 'models/usage.js']);
    // The worker loop, without pg: the store and bus it is given bring that (troupe/postgres).
    expect(loaded.files.filter((file) => file.startsWith('store/postgres'))).toEqual([]);
  });

  it('troupe/mcp: the MCP tool adapter; the MCP SDK (found, not loaded, on import) loads on connect', async () => {
    const loaded = await load('troupe/mcp');
    expect(loaded.exports).toEqual(['McpConnectionError', 'mcp', 'mcpContentParts', 'mcpPlugin', 'mcpToolName', 'renderMcpContent']);
    // tools/json-schema-validator.js loads @cfworker/json-schema only when a JSON Schema tool is made.
    expect(loaded.files).toEqual([
      'entry/mcp.js', 'errors.js', 'mcp/deferred-tools.js', 'mcp/index.js', 'mcp/mcp-content.js', 'mcp/mcp-plugin.js', 'mcp/mcp.js', 'message-parts.js', 'option-keys.js', 'peers.js',
      'tools/json-schema-validator.js', 'tools/parameters.js', 'tools/raw-tool.js', 'tools/result.js', 'tools/schema.js', 'tools/standard-schema.js', 'tools/tool.js', 'tools/validate.js',
    ]);
    expect(loaded.packages).toEqual(['zod']);
  });

  it('troupe/ai-sdk: the AI SDK adapter, its error type and modelFromEnv, loading no @ai-sdk package (the application brings its provider)', async () => {
    const loaded = await load('troupe/ai-sdk');
    expect(loaded.exports).toEqual(['AiSdkModel', 'ProviderError', 'aiSdkModel', 'defaultParallelToolCalls', 'modelFromEnv']);
    expect(loaded.files).toEqual([
      'cli/model-from-env.js', 'entry/ai-sdk.js', 'errors.js', 'models/ai-sdk-options.js', 'models/ai-sdk-parts.js', 'models/ai-sdk-request.js', 'models/ai-sdk-stream.js',
      'models/ai-sdk-v4.js', 'models/ai-sdk.js', 'models/provider-error.js', 'option-keys.js', 'peers.js',
    ]);
    expect(loaded.packages).toEqual([]);
  });

  it('troupe/otel: tracing helpers, with @opentelemetry/api loaded only once a tracer is used', async () => {
    const loaded = await load('troupe/otel');
    expect(loaded.exports).toContain('traceRun');
    expect(loaded.packages).toEqual([]);
    // context/: the run options' contextPolicy check; machines/: only the table of the chart's state ids (run-states.js).
    expect(areas(loaded)).toEqual(['context', 'entry', 'errors.js', 'machines', 'message-parts.js', 'option-keys.js', 'otel', 'peers.js', 'runtime']);
    expect(loaded.files.filter((file) => file.startsWith('machines/'))).toEqual(['machines/run-states.js']);
  });
});
