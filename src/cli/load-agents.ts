import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UserError } from '../errors.js';
import type { AgentSource } from '../server/server.js';

/** `troupe serve --agents <file>` could not use the module: the message names the file and what it found. */
export class AgentsModuleError extends UserError {
  constructor(
    readonly file: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AgentsModuleError';
  }
}

const TS_EXTENSIONS = /\.(?:ts|mts|cts|tsx)$/i;

/** An Agent by shape: the module may load its own copy of troupe (e.g. through tsx), so `instanceof` is not enough. */
function isAgentLike(value: unknown): value is { name: string } {
  return typeof value === 'object' && value !== null && typeof (value as { name?: unknown }).name === 'string' && typeof (value as { toolTable?: unknown }).toolTable === 'function';
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return isAgentLike(value) ? `Agent '${value.name}'` : 'an object';
  return `${typeof value} ${JSON.stringify(value)?.slice(0, 40)}`;
}

/**
 * Imports the agents module at `path` (`.js`/`.mjs`, or `.ts`/`.mts` through tsx's loader,
 * registered in this process, so `--agents ./agents.ts` works without a build step) and returns
 * its agents by name.
 *
 * Accepted shapes: `export const agents = { name: Agent | () => Agent }`, the same object as
 * the default export, a default export that is one Agent, or named exports that are Agents.
 * @throws AgentsModuleError when the file cannot be imported (tsx missing for a `.ts` file,
 * a syntax error) or exports no agent: the message names the file and what it exports.
 */
export async function loadAgents(path: string): Promise<Record<string, AgentSource>> {
  const url = pathToFileURL(resolve(path)).href;
  let mod: Record<string, unknown>;
  try {
    mod = TS_EXTENSIONS.test(path) ? await importTypeScript(path, url) : ((await import(url)) as Record<string, unknown>);
  } catch (error) {
    if (error instanceof AgentsModuleError) throw error;
    throw new AgentsModuleError(path, `${path} could not be imported: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  }
  const chosen = mod.agents !== undefined ? { key: 'agents', value: mod.agents } : mod.default !== undefined ? { key: 'default', value: mod.default } : undefined;
  if (chosen) {
    if (isAgentLike(chosen.value)) return { [chosen.value.name]: chosen.value as unknown as AgentSource };
    if (typeof chosen.value !== 'object' || chosen.value === null || Array.isArray(chosen.value)) {
      throw new AgentsModuleError(path, `${path}: export \`${chosen.key}\` must be an object of agents by name, found ${describeValue(chosen.value)}.`);
    }
    const entries = Object.entries(chosen.value as Record<string, unknown>);
    const bad = entries.filter(([, value]) => !isAgentLike(value) && typeof value !== 'function');
    if (entries.length === 0 || bad.length > 0) {
      const found = entries.length === 0 ? 'an empty object' : bad.map(([name, value]) => `${name}: ${describeValue(value)}`).join(', ');
      throw new AgentsModuleError(path, `${path}: export \`${chosen.key}\` has no agents (each value must be an Agent or a function returning one), found ${found}.`);
    }
    return Object.fromEntries(entries) as Record<string, AgentSource>;
  }
  const named = Object.entries(mod).filter(([, value]) => isAgentLike(value));
  if (named.length > 0) return Object.fromEntries(named.map(([, agent]) => [(agent as { name: string }).name, agent as unknown as AgentSource]));
  // Sorted, as a native module namespace lists them (whatever loaded the module).
  const keys = Object.keys(mod).sort();
  const found = keys.length === 0 ? 'no exports' : `exports ${keys.map((key) => `${key} (${describeValue(mod[key])})`).join(', ')}`;
  throw new AgentsModuleError(path, `${path} exports no agents: expected \`agents\` (or a default export) mapping names to Agents or factories, found ${found}.`);
}

/** Whether tsx's loader is registered in this process (once, for good: the module may import more .ts files later). */
let tsxRegistered = false;

async function importTypeScript(path: string, url: string): Promise<Record<string, unknown>> {
  let register: () => unknown;
  try {
    ({ register } = (await import('tsx/esm/api')) as unknown as { register: typeof register });
  } catch (error) {
    throw new AgentsModuleError(path, `${path} is TypeScript: loading it needs tsx (npm install --save-dev tsx), or compile it to .js first.`, { cause: error });
  }
  // Registered for the whole process, not in a tsImport namespace: a namespace loads every
  // module the file imports again, troupe included, and the agents' handoffs and agent tools
  // (objects of that second copy's classes) then fail this troupe's `instanceof Agent` checks.
  if (!tsxRegistered) {
    register();
    tsxRegistered = true;
  }
  return (await import(url)) as Record<string, unknown>;
}
