/**
 * `troupe/server`: the HTTP API (SSE and AI SDK UI message streams), the demo server and
 * the inspection feed. Everything `src/server/index.ts` exports is public here, so server
 * features become available without touching this file.
 */
export * from '../server/index.js';
export { InspectionFeed, type FeedListener, type FeedOptions, type InspectMode } from '../inspect/feed.js';
