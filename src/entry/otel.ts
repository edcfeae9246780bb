/**
 * `troupe/otel`: OpenTelemetry GenAI tracing (see `src/otel/index.ts`). `@opentelemetry/api`
 * is an optional peer that loads once a tracer is used; importing this entry checks that it
 * is installed.
 * @throws UserError on import when `@opentelemetry/api` is not installed.
 */
import { assertPeerInstalled } from '../peers.js';

assertPeerInstalled('@opentelemetry/api', 'troupe/otel');

export * from '../otel/index.js';
