import { sanitize, toJsonSafe, type SanitizeLimits } from '../inspect/sanitize.js';
import type { WireRunEvent } from '../inspect/wire.js';
import type { RunEvent } from '../types.js';

/**
 * A run event as JSON for the chat stream: every field kept, `approve`/`reject` dropped,
 * errors as `{ name, code, message }`, values JSON cannot hold (bigint, cycles) made safe.
 */
export function serializeRunEvent(event: RunEvent): WireRunEvent {
  return toJsonSafe(event) as WireRunEvent;
}

/** Limits for run events in the inspector feed: roomier than actor context, still bounded. */
export const RUN_EVENT_LIMITS: SanitizeLimits = { maxString: 2_000, maxItems: 50, maxDepth: 6 };

/** The feed's copy of a serialised event: truncated. */
export function feedRunEvent(event: WireRunEvent): WireRunEvent {
  return sanitize(event, RUN_EVENT_LIMITS) as WireRunEvent;
}
