export { InspectionFeed, type FeedListener, type FeedOptions, type InspectMode } from './feed.js';
export { walkMachine, activeStateIds } from './definition.js';
export { sanitize, toJsonSafe, errorToWire, INSPECT_LIMITS, type SanitizeLimits } from './sanitize.js';
export * from './wire.js';
