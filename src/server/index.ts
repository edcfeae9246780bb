export { createServer, type ServerOptions, type ServerRunOptions, type ServerStats, type TroupeServer, type AgentSource } from './server.js';
export { startDemoServer, banner, type DemoServerOptions } from './demo.js';
export { serializeRunEvent } from './serialize.js';
export type { RunSummary, PendingApprovalView } from './runs.js';
export type { ServerCluster } from './cluster-routes.js';
export type { CoverageSource, CoverageAnswer } from './coverage-route.js';
export { startWorker, type Worker, type WorkerOptions, type WorkerStore } from '../worker/worker.js';
export {
  toUIMessageStream,
  UIMessageChunkMapper,
  UI_MESSAGE_STREAM_HEADERS,
  UI_STREAM_DONE_FRAME,
  uiChunkFrame,
  parentToolCallId,
  type ToUIMessageStreamOptions,
  type OpenedApproval,
  type UIChunkOptions,
  type UIMessageChunk,
  type TroupeMessageMetadata,
  type TroupeToolMetadata,
} from './ui-stream.js';
