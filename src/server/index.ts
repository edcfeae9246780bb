export { createServer, type ServerOptions, type ServerRunOptions, type ServerStats, type TroupeServer, type AgentSource } from './server.js';
export { startDemoServer, banner, type DemoServerOptions } from './demo.js';
export { serializeRunEvent } from './serialize.js';
export type { RunSummary, PendingApprovalView } from './runs.js';
