export { Agent, type AgentOptions, type ApprovalDecision, type ApprovalHandler, type ApprovalRequest } from './agent.js';
export {
  TroupeError,
  UserError,
  ToolError,
  InvalidToolArguments,
  RunCancelled,
  BudgetExceeded,
  MaxTurnsExceeded,
  ModelError,
  ScriptExhausted,
  ToolTimeout,
  type ArgumentIssue,
  type BudgetKind,
} from './errors.js';
export { tool, type Tool, type ToolOptions, type ToolPolicy, type ToolSchema, type ResultRenderer, type NeedsApproval } from './tools/tool.js';
export { toolResult, type ToolResult } from './tools/result.js';
export type { RunContext, Mailbox } from './tools/context.js';
export type { Model, ModelRequest, ModelSettings, ModelStreamPart } from './models/model.js';
export { ScriptedModel, text, call, batch, type ScriptStep, type RecordedRequest } from './models/scripted.js';
export { Runner, RunHandle, getRunMachine, type RunResult, type ApprovalControls } from './runtime/runner.js';
export type { PendingApproval, ApprovalTarget } from './runtime/approvals.js';
export type { RunOptions, InspectionObserver } from './runtime/run-options.js';
export {
  MemoryCheckpointStore,
  type CheckpointStore,
  type CheckpointEntry,
  type CheckpointHead,
  type RunStatus,
  type StoredRun,
  type RunSummary,
  type ListRunsOptions,
  type MemoryCheckpointStoreOptions,
} from './store/checkpoint-store.js';
export { SqliteCheckpointStore } from './store/sqlite-checkpoint-store.js';
export type { SqliteStoreOptions } from './store/sqlite-options.js';
export { MemorySession, type Session } from './store/session.js';
export { SqliteSession } from './store/sqlite-session.js';
export { exportRun, parseRunExport, CHECKPOINT_SCHEMA_VERSION, SESSION_SCHEMA_VERSION, type RunExport } from './store/format.js';
export { aiSdkModel, AiSdkModel, defaultParallelToolCalls, type AiSdkModelOptions, type ParallelToolCallsMapper } from './models/ai-sdk.js';
export { ProviderError } from './models/provider-error.js';
export {
  mcp,
  McpConnectionError,
  type McpServer,
  type McpServerOptions,
  type McpStdioOptions,
  type McpHttpOptions,
  type McpCommonOptions,
  type McpToolInfo,
  type McpApproval,
} from './mcp/index.js';
export { rawTool, checkJsonSchema, type RawToolOptions } from './tools/raw-tool.js';
export {
  workspaceTools,
  decideWorkspacePolicy,
  type WorkspaceOptions,
  type WorkspacePolicy,
  type WorkspaceRule,
  type WorkspaceToolName,
  type PolicyDecision,
} from './tools/workspace/index.js';
export { askHuman, type HumanChannel, type AskHumanOptions } from './tools/ask-human.js';
export { modelFromEnv } from './cli/model-from-env.js';
export { createServer, type ServerOptions, type TroupeServer, type AgentSource } from './server/server.js';
export { startDemoServer } from './server/demo.js';
export { InspectionFeed } from './inspect/feed.js';
export { handoff, type HandoffOptions } from './handoff/handoff.js';
export { agentAsTool, type AgentToolOptions } from './handoff/agent-tool.js';
export type { HandoffInputFilter } from './runtime/run-state.js';
export type * from './types.js';
