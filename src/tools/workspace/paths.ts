import { lstat, readlink, realpath, stat } from 'node:fs/promises';
import { statSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolError, UserError } from '../../errors.js';

export interface ResolvedPath {
  /** Real absolute path (symlinks resolved, also for the parts that do not exist yet). */
  readonly abs: string;
  /** Relative to the workspace root with '/' separators; '.' for the root itself. */
  readonly rel: string;
}

const MAX_LINKS = 40;

/** A folder that file tools may not leave: `..`, absolute paths and symlinks are resolved before use. */
export class WorkspaceRoot {
  readonly path: string;

  constructor(root: string) {
    let real: string;
    try {
      real = realpathSync(resolve(root));
    } catch {
      throw new UserError(`Workspace root '${root}' does not exist.`);
    }
    if (!statSync(real).isDirectory()) throw new UserError(`Workspace root '${root}' is not a directory.`);
    this.path = real;
  }

  /** Resolves a model-given path; throws a ToolError when it leads outside the root. */
  async resolve(input: string): Promise<ResolvedPath> {
    const given = input.trim() === '' ? '.' : input;
    if (given.includes('\0')) throw new ToolError(`path '${printable(given)}' contains a NUL byte.`);
    const lexical = resolve(this.path, given);
    if (!this.contains(lexical)) {
      throw new ToolError(`path '${given}' is outside the workspace.`, { hint: 'use a path relative to the workspace root, without leading .. segments' });
    }
    const real = await realResolve(lexical, 0);
    if (!this.contains(real)) {
      throw new ToolError(`path '${given}' leads outside the workspace through a symbolic link.`);
    }
    const rel = relative(this.path, real);
    return { abs: real, rel: rel === '' ? '.' : rel.split(sep).join('/') };
  }

  private contains(abs: string): boolean {
    const rel = relative(this.path, abs);
    return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
  }
}

/**
 * Like realpath, but for paths whose tail does not exist yet (files about to be written):
 * the existing part is resolved, dangling symlinks are followed to their target, and the
 * rest is appended.
 */
async function realResolve(path: string, links: number): Promise<string> {
  try {
    return await realpath(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw asToolError(error, path);
  }
  const info = await lstat(path).catch(() => undefined);
  if (info?.isSymbolicLink()) {
    if (links >= MAX_LINKS) throw new ToolError(`too many levels of symbolic links at '${path}'.`);
    return realResolve(resolve(dirname(path), await readlink(path)), links + 1);
  }
  const parent = dirname(path);
  if (parent === path) return path;
  return join(await realResolve(parent, links), basename(path));
}

/** Turns fs errors into ToolErrors with the workspace-relative path. */
export function asToolError(error: unknown, rel: string): Error {
  const code = (error as NodeJS.ErrnoException)?.code;
  switch (code) {
    case 'ENOENT':
      return new ToolError(`'${rel}' does not exist.`);
    case 'EISDIR':
      return new ToolError(`'${rel}' is a directory.`);
    case 'ENOTDIR':
      return new ToolError(`a parent of '${rel}' is not a directory.`);
    case 'EACCES':
    case 'EPERM':
      return new ToolError(`permission denied for '${rel}'.`);
    case 'EEXIST':
      return new ToolError(`'${rel}' already exists.`);
    default:
      return error instanceof Error ? error : new ToolError(String(error));
  }
}

export async function kindOf(abs: string): Promise<'file' | 'directory' | 'other' | 'missing'> {
  try {
    const info = await stat(abs);
    return info.isFile() ? 'file' : info.isDirectory() ? 'directory' : 'other';
  } catch {
    return 'missing';
  }
}

function printable(text: string): string {
  return text.replace(/\0/g, '\\0');
}
