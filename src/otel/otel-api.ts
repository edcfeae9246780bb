import type * as OtelApiModule from '@opentelemetry/api';
import { requirePeer } from '../peers.js';

/** The `@opentelemetry/api` module. */
export type OtelApi = typeof OtelApiModule;

let loaded: OtelApi | undefined;

/**
 * `@opentelemetry/api`, loaded on first use: only a run with a `tracer` ever calls this, so
 * `import 'troupe'` never loads the OpenTelemetry API. Node resolves both `import` and
 * `require` of the package to the same CommonJS build, and the API keeps its global state
 * (context manager, context keys) under `Symbol.for` keys, so this is the instance the
 * application's own tracer provider uses. Never loads an SDK.
 * @throws UserError when `@opentelemetry/api` (an optional peer of troupe) is not installed.
 */
export function otelApi(): OtelApi {
  return (loaded ??= requirePeer<OtelApi>('@opentelemetry/api', 'troupe/otel (a run with a tracer)'));
}
