/**
 * `troupe`: the core (agents, tools, the runner, errors, event and message types, in-memory
 * stores). It loads no native module, no server and no test double; those live in
 * `troupe/sqlite`, `troupe/server`, `troupe/mcp`, `troupe/ai-sdk`, `troupe/otel` and
 * `troupe/testing` (test/entry/ checks what an import of each loads).
 */
export { Agent, type AgentOptions, type ApprovalDecision, type ApprovalHandler, type ApprovalRequest } from './agent.js';
export {
  TroupeError,
  UserError,
  ToolError,
  InvalidToolArguments,
  RunCancelled,
  RunLocked,
  RunSuspended,
  BudgetExceeded,
  MaxTurnsExceeded,
  ModelError,
  ScriptExhausted,
  ToolTimeout,
  HookError,
  GuardrailTripped,
  OutputValidationError,
  WaitTimeout,
  PluginError,
  type ArgumentIssue,
  type BudgetKind,
} from './errors.js';
export { tool, type Tool, type ToolOptions, type ToolPolicy, type ToolSchema, type ResultRenderer, type NeedsApproval } from './tools/tool.js';
export { toolResult, type ToolResult } from './tools/result.js';
export type { RunContext, Mailbox } from './tools/context.js';
export type { Model, ModelRequest, ModelSettings, ModelStreamPart, ContentPartSupport } from './models/model.js';
export { partsText } from './message-parts.js';
export { Runner, RunHandle, getRunMachine, type RunResult, type ApprovalControls, type HumanControls, type WaitControls } from './runtime/runner.js';
export type { StoredPending } from './runtime/pending-stored.js';
export * from './waits/wait-for.js';
export type { WaitKindName, WaitView, WaitRequest, WaitOutcome } from './waits/wait-types.js';
export type { PendingApproval, ApprovalTarget } from './runtime/approvals.js';
export type { HumanRequest, HumanAnswer } from './runtime/humans.js';
export type { AgentHooks, HookContext, ModelCallView, AfterModelResponse, AfterTurn, HookedCall, HookedResult, Guardrail, GuardrailVerdict, ResolvedToolCall } from './hooks.js';
export { customMessage, isCustomMessage } from './context/custom-messages.js';
export type { RunOptions, InspectionObserver } from './runtime/run-options.js';
export type { RunSubscriber, RunEventHandler } from './runtime/subscribers.js';
export type { Plugin, PluginContext, PluginSetup, ViewInjector } from './plugins/plugin.js';
export {
  MemoryCheckpointStore,
  type CheckpointStore,
  type CheckpointEntry,
  type CheckpointHead,
  type StoredRun,
  type RunSummary,
  type ListRunsOptions,
  type MemoryCheckpointStoreOptions,
} from './store/checkpoint-store.js';
export { RUN_STATUSES, STORED_RUN_STATUSES, FINISHED_RUN_STATUSES, isFinished, type RunStatus, type StoredRunStatus } from './run-status.js';
export { MemorySession, type Session } from './store/session.js';
export { exportRun, parseRunExport, CHECKPOINT_SCHEMA_VERSION, SESSION_SCHEMA_VERSION, type RunExport } from './store/format.js';
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
export { askFromTool, askFormFromTool, confirmFromTool, type AskFromToolOptions } from './tools/ask-from-tool.js';
export type { FormQuestion, FormAnswers } from './runtime/human-form.js';
export { handoff, type HandoffOptions } from './handoff/handoff.js';
export { agentAsTool, type AgentToolOptions } from './handoff/agent-tool.js';
export type { HandoffInputFilter } from './handoff/handoff.js';
export type { ContextPolicy } from './context/policy.js';
export { recallToolResult } from './context/recall-tool.js';
export { ContextOverflowError, isContextOverflow } from './models/context-overflow.js';
export type * from './types.js';
