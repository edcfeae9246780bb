/**
 * Optional peer dependencies: the packages only some entries need (`better-sqlite3` for
 * `troupe/sqlite`, `pg` for `troupe/postgres`, the MCP SDK for `troupe/mcp`,
 * `@opentelemetry/api` for `troupe/otel`, `@ai-sdk/openai-compatible` for `modelFromEnv`).
 * The application installs the ones it uses, so `npm install troupe` compiles nothing; when
 * one is missing, the entry that needs it fails with a UserError that says what to install.
 */
import { createRequire } from 'node:module';
import { UserError } from './errors.js';

// Resolves from troupe's own folder, as a static import would: the application's
// node_modules (where npm puts peers) is on that path.
const requireFromTroupe = createRequire(import.meta.url);

/** The error for a peer that is not installed: names the package, who needs it and the install command. */
export function missingPeer(name: string, neededBy: string): UserError {
  return new UserError(`${neededBy} needs the package '${name}', which is not installed. Install it next to troupe: npm install ${name}`);
}

/**
 * Loads a CommonJS peer synchronously (`require`), so the module that uses it needs no
 * top-level await.
 * @throws UserError (`missingPeer`) when the package is not installed; any other load
 * failure (a broken install, a missing dependency of the peer) as it is.
 */
export function requirePeer<T>(name: string, neededBy: string): T {
  try {
    return requireFromTroupe(name) as T;
  } catch (error) {
    if (isNotFound(error, name)) throw missingPeer(name, neededBy);
    throw error;
  }
}

/**
 * Checks that a peer can be found without loading it (for entries that load it later, on
 * first use). `specifier` is a file of the package that `require` can resolve (packages
 * without a root export, like the MCP SDK, need one).
 * @throws UserError (`missingPeer`) when the package is not installed.
 */
export function assertPeerInstalled(name: string, neededBy: string, specifier: string = name): void {
  try {
    requireFromTroupe.resolve(specifier);
  } catch (error) {
    if (isNotFound(error, name)) throw missingPeer(name, neededBy);
    // Installed but not resolvable through `require` (an ESM-only export): it is there.
    if ((error as NodeJS.ErrnoException).code === 'ERR_PACKAGE_PATH_NOT_EXPORTED') return;
    throw error;
  }
}

/**
 * Runs a dynamic `import()` of a peer (written at the call site so that its types follow
 * the specifier).
 * @throws UserError (`missingPeer`) when the package is not installed.
 */
export async function importPeer<T>(load: () => Promise<T>, name: string, neededBy: string): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isNotFound(error, name)) throw missingPeer(name, neededBy);
    throw error;
  }
}

/**
 * True when `error` says that `name` itself could not be found (not a file or a dependency
 * inside it, which is a broken install and keeps its own message).
 */
function isNotFound(error: unknown, name: string): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (code !== 'MODULE_NOT_FOUND' && code !== 'ERR_MODULE_NOT_FOUND') return false;
  if (typeof message !== 'string') return false;
  // require: "Cannot find module 'pg'"; import: "Cannot find package 'pg' imported from …";
  // a subpath specifier ('@modelcontextprotocol/sdk/client/index.js') may be named whole.
  return [`Cannot find module '${name}`, `Cannot find package '${name}`].some((start) => message.includes(`${start}'`) || message.includes(`${start}/`));
}
