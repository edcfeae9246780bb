import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { z } from 'zod';
import { ToolError, UserError } from '../../errors.js';
import { checkOptionKeys } from '../../option-keys.js';
import type { RunContext } from '../context.js';
import { toolResult } from '../result.js';
import { tool, type Tool } from '../tool.js';
import { asToolError, kindOf, WorkspaceRoot, type ResolvedPath } from './paths.js';
import { checkPolicy, decide, WORKSPACE_TOOL_NAMES, type WorkspacePolicy, type WorkspaceToolName } from './policy.js';
import { formatShellOutcome, runShell } from './shell.js';

export { decide as decideWorkspacePolicy, DEFAULT_DECISIONS, type PolicyDecision, type WorkspacePolicy, type WorkspaceRule, type WorkspaceToolName } from './policy.js';

export interface WorkspaceOptions {
  /** The folder the file tools are confined to (must exist). */
  root: string;
  /** allow / ask / deny per tool, path and command. Default: reads allow, writes and shell ask. */
  policy?: WorkspacePolicy;
  /** Which tools to build. Default: all five. */
  tools?: readonly WorkspaceToolName[];
  /** read_file refuses larger files. Default 10 MB. */
  maxReadBytes?: number;
  shell?: {
    /** Default '/bin/sh'. */
    shell?: string;
    /** The command's environment. Default: this process's environment. */
    env?: Readonly<Record<string, string | undefined>>;
    /** Per command; the process group is killed when it passes. Default 120,000. */
    timeoutMs?: number;
    /** stdout and stderr are each cut at this size. Default 1 MB. */
    maxOutputBytes?: number;
  };
}

const MB = 1024 * 1024;

/**
 * File tools confined to `root` (`read_file`, `list_dir`, `write_file`, `edit_file`) and a
 * `shell` that runs commands in it. Readers run in parallel; writers and shell are
 * barriers. Every call is checked against `policy`: `allow` runs, `ask` goes through the
 * run's approval flow (the tool's needsApproval says yes), `deny` is an error result.
 *
 * Confinement covers the file tools (paths are resolved, `..` and symlink escapes are
 * refused). `shell` only starts in the root: a command can reach anything the process can,
 * which is why the default policy asks before every command.
 */
export function workspaceTools(options: WorkspaceOptions): Tool[] {
  checkOptionKeys(options, ['root', 'policy', 'tools', 'maxReadBytes', 'shell'], 'workspaceTools');
  if (options.shell !== undefined) checkOptionKeys(options.shell, ['shell', 'env', 'timeoutMs', 'maxOutputBytes'], 'workspaceTools shell');
  const root = new WorkspaceRoot(options.root);
  checkPolicy(options.policy);
  const selected = options.tools ?? WORKSPACE_TOOL_NAMES;
  for (const name of selected) {
    if (!WORKSPACE_TOOL_NAMES.includes(name)) throw new UserError(`Unknown workspace tool '${name}': use ${WORKSPACE_TOOL_NAMES.join(', ')}.`);
  }
  const maxReadBytes = options.maxReadBytes ?? 10 * MB;
  const shell = {
    shell: options.shell?.shell ?? '/bin/sh',
    env: options.shell?.env ?? process.env,
    timeoutMs: options.shell?.timeoutMs ?? 120_000,
    maxOutputBytes: options.shell?.maxOutputBytes ?? MB,
  };
  const gate = new PolicyGate(options.policy);
  const pathTarget = async (args: { path?: string }): Promise<string> => (await root.resolve(args.path ?? '.')).rel;

  const builders: Record<WorkspaceToolName, () => Tool> = {
    read_file: () =>
      tool({
        name: 'read_file',
        description: 'Read a UTF-8 text file of the workspace. Optionally only lines offset..offset+limit-1 (1-based).',
        parameters: z.object({
          path: z.string().describe('Path relative to the workspace root.'),
          offset: z.number().int().min(1).optional().describe('First line to return, 1-based.'),
          limit: z.number().int().min(1).optional().describe('How many lines to return.'),
        }),
        needsApproval: (args, ctx) => gate.needsApproval('read_file', () => pathTarget(args), ctx),
        execute: async (args, ctx) => {
          const target = await root.resolve(args.path);
          const denied = gate.check('read_file', target.rel, ctx);
          if (denied) return denied;
          const kind = await kindOf(target.abs);
          if (kind === 'directory') throw new ToolError(`'${target.rel}' is a directory.`, { hint: 'use list_dir for directories' });
          if (kind === 'missing') throw new ToolError(`'${target.rel}' does not exist.`);
          const size = (await stat(target.abs)).size;
          if (size > maxReadBytes) {
            throw new ToolError(`'${target.rel}' has ${size.toLocaleString('en-US')} bytes, over the read limit of ${maxReadBytes.toLocaleString('en-US')}.`);
          }
          const bytes = await readFile(target.abs).catch((error: unknown) => {
            throw asToolError(error, target.rel);
          });
          if (bytes.subarray(0, 8192).includes(0)) throw new ToolError(`'${target.rel}' looks like a binary file.`);
          const content = bytes.toString('utf8');
          if (args.offset === undefined && args.limit === undefined) return content;
          const lines = content.split('\n');
          const start = (args.offset ?? 1) - 1;
          return lines.slice(start, args.limit === undefined ? undefined : start + args.limit).join('\n');
        },
      }),

    list_dir: () =>
      tool({
        name: 'list_dir',
        description: "List a directory of the workspace: one entry per line, directories end with '/', symbolic links with '@'.",
        parameters: z.object({ path: z.string().default('.').describe("Path relative to the workspace root; '.' is the root.") }),
        needsApproval: (args, ctx) => gate.needsApproval('list_dir', () => pathTarget(args), ctx),
        execute: async (args, ctx) => {
          const target = await root.resolve(args.path);
          const denied = gate.check('list_dir', target.rel, ctx);
          if (denied) return denied;
          const entries = await readdir(target.abs, { withFileTypes: true }).catch((error: unknown) => {
            throw asToolError(error, target.rel);
          });
          if (entries.length === 0) return '(empty directory)';
          return entries
            .map((e) => (e.isDirectory() ? `${e.name}/` : e.isSymbolicLink() ? `${e.name}@` : e.name))
            .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
            .join('\n');
        },
      }),

    write_file: () =>
      tool({
        name: 'write_file',
        description: 'Create or overwrite a text file in the workspace (parent folders are created).',
        parameters: z.object({
          path: z.string().describe('Path relative to the workspace root.'),
          content: z.string().describe('The complete new content.'),
        }),
        parallel: false,
        needsApproval: (args, ctx) => gate.needsApproval('write_file', () => pathTarget(args), ctx),
        execute: async (args, ctx) => {
          const target = await root.resolve(args.path);
          const denied = gate.check('write_file', target.rel, ctx);
          if (denied) return denied;
          const kind = await kindOf(target.abs);
          if (kind === 'directory') throw new ToolError(`'${target.rel}' is a directory.`);
          try {
            await mkdir(dirname(target.abs), { recursive: true });
            await writeFile(target.abs, args.content, 'utf8');
          } catch (error) {
            throw asToolError(error, target.rel);
          }
          const bytes = Buffer.byteLength(args.content, 'utf8');
          return `${kind === 'missing' ? 'Created' : 'Overwrote'} '${target.rel}' (${bytes.toLocaleString('en-US')} bytes).`;
        },
      }),

    edit_file: () =>
      tool({
        name: 'edit_file',
        description: 'Replace an exact piece of text in a workspace file. old_text must occur exactly once unless replace_all is true.',
        parameters: z.object({
          path: z.string().describe('Path relative to the workspace root.'),
          old_text: z.string().min(1).describe('The exact text to replace, with enough context to be unique.'),
          new_text: z.string().describe('The replacement.'),
          replace_all: z.boolean().default(false).describe('Replace every occurrence.'),
        }),
        parallel: false,
        needsApproval: (args, ctx) => gate.needsApproval('edit_file', () => pathTarget(args), ctx),
        execute: async (args, ctx) => {
          const target = await root.resolve(args.path);
          const denied = gate.check('edit_file', target.rel, ctx);
          if (denied) return denied;
          const content = await readFile(target.abs, 'utf8').catch((error: unknown) => {
            throw asToolError(error, target.rel);
          });
          const pieces = content.split(args.old_text);
          const count = pieces.length - 1;
          if (count === 0) throw new ToolError(`old_text was not found in '${target.rel}'.`, { hint: 'read the file first and copy the text exactly, whitespace included' });
          if (count > 1 && !args.replace_all) {
            throw new ToolError(`old_text occurs ${count} times in '${target.rel}'.`, { hint: 'include more surrounding text to make it unique, or set replace_all' });
          }
          await writeFile(target.abs, pieces.join(args.new_text), 'utf8').catch((error: unknown) => {
            throw asToolError(error, target.rel);
          });
          return `Replaced ${count} occurrence${count === 1 ? '' : 's'} in '${target.rel}'.`;
        },
      }),

    shell: () =>
      tool({
        name: 'shell',
        description: `Run a shell command (${shell.shell} -c) in the workspace root. Returns the exit code, stdout and stderr.`,
        parameters: z.object({ command: z.string().min(1).describe('The command line.') }),
        parallel: false,
        timeoutMs: shell.timeoutMs,
        needsApproval: (args, ctx) => gate.needsApproval('shell', async () => args.command, ctx),
        execute: async (args, ctx) => {
          const denied = gate.check('shell', args.command, ctx);
          if (denied) return denied;
          const outcome = await runShell(args.command, { cwd: root.path, shell: shell.shell, env: shell.env, maxOutputBytes: shell.maxOutputBytes, signal: ctx.signal });
          return toolResult({
            content: formatShellOutcome(outcome, shell.maxOutputBytes),
            isError: outcome.exitCode !== 0,
            details: outcome,
          });
        },
      }),
  };
  return selected.map((name) => ({ ...builders[name](), source: 'workspace tools' }));
}

/**
 * Applies the policy. `needsApproval` decides before the call (and remembers what an
 * approval was asked for); `check` decides again at execution: `deny` becomes an error
 * result, and an `ask` target that differs from the approved one (a path whose symlinks
 * changed while the approval was pending, or a direct call that skipped the approval) is
 * refused.
 */
class PolicyGate {
  private readonly askedTargets = new Map<string, string>();

  constructor(private readonly policy: WorkspacePolicy | undefined) {}

  async needsApproval(tool: WorkspaceToolName, target: () => Promise<string>, ctx: RunContext<any>): Promise<boolean> {
    let resolved: string;
    try {
      resolved = await target();
    } catch {
      return false; // the call fails at execution with the resolution error; nothing to approve
    }
    if (decide(this.policy, tool, resolved).decision !== 'ask') return false;
    this.askedTargets.set(key(ctx), resolved);
    if (this.askedTargets.size > 1000) this.askedTargets.delete(this.askedTargets.keys().next().value!);
    return true;
  }

  check(tool: WorkspaceToolName, target: string, ctx: RunContext<any>): ReturnType<typeof toolResult> | undefined {
    const verdict = decide(this.policy, tool, target);
    const what = tool === 'shell' ? `shell command '${target}'` : `${tool} on '${target}'`;
    if (verdict.decision === 'deny') {
      return toolResult({ isError: true, content: `Tool error: denied by workspace policy: ${what}${verdict.reason ? ` (${verdict.reason})` : ''}.` });
    }
    if (verdict.decision === 'ask' && this.askedTargets.get(key(ctx)) !== target) {
      return toolResult({ isError: true, content: `Tool error: ${what} needs an approval that was not given for this target.` });
    }
    return undefined;
  }
}

const key = (ctx: RunContext<any>): string => `${ctx.runId}\u0000${ctx.callId}`;
