/**
 * Root names that moved to subpath entries (`troupe/server`, `troupe/mcp`, `troupe/sqlite`,
 * `troupe/ai-sdk`, `troupe/testing`), kept in the root for one version.
 *
 * Importing `troupe` must not load the server, the MCP client, native modules or test
 * doubles, so nothing here imports them at load time: functions that already return a
 * promise load their module on their first call (same signature, same result), and classes
 * and option types stay as types only (a type annotation keeps compiling; `new` or
 * `instanceof` needs the subpath import). The script step builders (`text`, `call`,
 * `batch`) are plain data helpers kept apart from the ScriptedModel class, so they stay
 * here as they are. `aiSdkModel`, `defaultParallelToolCalls` and `modelFromEnv` cannot be
 * deferred without loading the AI SDK or the CLI and are only in their subpath.
 */
import * as Steps from './models/script-steps.js';
import type * as Mcp from './mcp/index.js';
import type * as Feed from './inspect/feed.js';
import type * as AiSdk from './models/ai-sdk.js';
import type * as Errors from './models/provider-error.js';
import type * as Scripted from './models/scripted.js';
import type * as Demo from './server/demo.js';
import type * as Server from './server/server.js';
import type * as CheckpointStore from './store/sqlite-checkpoint-store.js';
import type * as SqliteOptions from './store/sqlite-options.js';
import type * as Session from './store/sqlite-session.js';

/** @deprecated Import from `troupe/server`; this root alias is removed in the next version. */
export async function createServer(options: Server.ServerOptions): Promise<Server.TroupeServer> {
  return (await import('./server/server.js')).createServer(options);
}

/** @deprecated Import from `troupe/server`; this root alias is removed in the next version. */
export async function startDemoServer(options?: Demo.DemoServerOptions): Promise<Server.TroupeServer> {
  return (await import('./server/demo.js')).startDemoServer(options);
}

/** @deprecated Import from `troupe/mcp`; this root alias is removed in the next version. */
export async function mcp(options: Mcp.McpServerOptions): Promise<Mcp.McpServer> {
  return (await import('./mcp/index.js')).mcp(options);
}

/** @deprecated Type only here: import the class from `troupe/testing`. */
export type ScriptedModel = Scripted.ScriptedModel;
/** @deprecated Import from `troupe/testing`; this root alias is removed in the next version. */
export const text: typeof Steps.text = Steps.text;
/** @deprecated Import from `troupe/testing`; this root alias is removed in the next version. */
export const call: typeof Steps.call = Steps.call;
/** @deprecated Import from `troupe/testing`; this root alias is removed in the next version. */
export const batch: typeof Steps.batch = Steps.batch;
/** @deprecated Import from `troupe/testing`. */
export type ScriptStep = Scripted.ScriptStep;
/** @deprecated Import from `troupe/testing`. */
export type RecordedRequest = Scripted.RecordedRequest;

/** @deprecated Type only here: import the class from `troupe/sqlite`. */
export type SqliteCheckpointStore = CheckpointStore.SqliteCheckpointStore;
/** @deprecated Type only here: import the class from `troupe/sqlite`. */
export type SqliteSession = Session.SqliteSession;
/** @deprecated Import from `troupe/sqlite`. */
export type SqliteStoreOptions = SqliteOptions.SqliteStoreOptions;

/** @deprecated Type only here: import the class from `troupe/ai-sdk`. */
export type AiSdkModel = AiSdk.AiSdkModel;
/** @deprecated Import from `troupe/ai-sdk`. */
export type AiSdkModelOptions = AiSdk.AiSdkModelOptions;
/** @deprecated Import from `troupe/ai-sdk`. */
export type ParallelToolCallsMapper = AiSdk.ParallelToolCallsMapper;
/** @deprecated Type only here: import the class from `troupe/ai-sdk`. */
export type ProviderError = Errors.ProviderError;

/** @deprecated Type only here: import the class from `troupe/mcp`. */
export type McpConnectionError = Mcp.McpConnectionError;
/** @deprecated Import from `troupe/mcp`. */
export type McpServer = Mcp.McpServer;
/** @deprecated Import from `troupe/mcp`. */
export type McpServerOptions = Mcp.McpServerOptions;
/** @deprecated Import from `troupe/mcp`. */
export type McpStdioOptions = Mcp.McpStdioOptions;
/** @deprecated Import from `troupe/mcp`. */
export type McpHttpOptions = Mcp.McpHttpOptions;
/** @deprecated Import from `troupe/mcp`. */
export type McpCommonOptions = Mcp.McpCommonOptions;
/** @deprecated Import from `troupe/mcp`. */
export type McpToolInfo = Mcp.McpToolInfo;
/** @deprecated Import from `troupe/mcp`. */
export type McpApproval = Mcp.McpApproval;

/** @deprecated Import from `troupe/server`. */
export type ServerOptions = Server.ServerOptions;
/** @deprecated Import from `troupe/server`. */
export type TroupeServer = Server.TroupeServer;
/** @deprecated Import from `troupe/server`. */
export type AgentSource = Server.AgentSource;
/** @deprecated Type only here: import the class from `troupe/server`. */
export type InspectionFeed = Feed.InspectionFeed;
