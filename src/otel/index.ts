/**
 * `troupe/otel`: OpenTelemetry GenAI tracing. Most code needs none of this: pass
 * `tracer` (an `@opentelemetry/api` Tracer) in the run options and every run of the tree
 * is traced. This entry exports the pieces for custom wiring and the attribute names
 * spans use, so dashboards and tests can refer to them by name.
 */
export { traceRun, type TracedRun } from './trace-run.js';
export { RunTracer, type ModelReplyView, type ApprovalOutcomeView } from './run-tracer.js';
export { inspectRunActors } from './inspect-run-actors.js';
export { ATTR, modelIdentity, modelAttributes, errorType, type GenAiOperation, type ModelIdentity } from './gen-ai-attributes.js';
