import { createHash } from 'node:crypto';

/** Longest tool name providers accept. */
export const MAX_TOOL_NAME = 64;

/**
 * Tool-name-safe slug of an agent name: lower-case ASCII letters and digits, `_` for every
 * other character, `agent` when nothing is left. A name with characters beyond ASCII (any
 * other script: `Служба поддержки`, `客服`, `Café`) would lose what tells it apart, so its
 * slug is what ASCII is left (runs of `_` squeezed, `agent` when none) plus `_` and the first
 * 8 hex digits of the sha256 of the whole name: distinct and the same in every process.
 */
export function slugify(name: string): string {
  const ascii = name.toLowerCase().replace(/[^a-z0-9]/g, '_');
  if (/^[\x00-\x7f]*$/.test(name)) return ascii === '' ? 'agent' : ascii;
  const kept = ascii.replace(/_+/g, '_').replace(/^_|_$/g, '');
  return `${kept === '' ? 'agent' : kept}_${createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 8)}`;
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
