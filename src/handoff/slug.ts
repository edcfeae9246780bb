/** Longest tool name providers accept. */
export const MAX_TOOL_NAME = 64;

/**
 * Tool-name-safe slug of an agent name: lower-case ASCII letters and digits, `_` for every
 * other character, `agent` when nothing is left.
 */
export function slugify(name: string): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9]/g, '_');
  return slug === '' ? 'agent' : slug;
}

/**
 * `<prefix><slug>` cut to 64 characters. A cut name ends in `_` + an 8-hex hash of the
 * full name, so two long names that share a prefix still get different, stable tool names.
 */
export function toolNameFor(prefix: string, agentName: string): string {
  const full = prefix + slugify(agentName);
  if (full.length <= MAX_TOOL_NAME) return full;
  const suffix = `_${fnv1a(agentName)}`;
  return full.slice(0, MAX_TOOL_NAME - suffix.length) + suffix;
}

export const handoffToolName = (agentName: string): string => toolNameFor('transfer_to_', agentName);
export const agentToolName = (agentName: string): string => toolNameFor('ask_', agentName);

/** 32-bit FNV-1a over UTF-16 units, as 8 hex digits: small, deterministic, dependency-free. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}
