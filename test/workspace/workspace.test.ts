import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Agent, Runner, UserError, type RunEvent, type Tool } from '../../src/index.js';
import { ScriptedModel, batch, call, text } from '../../src/entry/testing.js';
import { decideWorkspacePolicy, workspaceTools, type WorkspacePolicy } from '../../src/tools/workspace/index.js';
import { collect, completed, trace } from '../helpers.js';

let base: string;
let root: string;
let outside: string;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), 'troupe-ws-')));
  root = join(base, 'root');
  outside = join(base, 'outside');
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(join(root, 'empty'));
  mkdirSync(outside);
  writeFileSync(join(root, 'README.md'), '# title\nline 2\nline 3\nline 4\n');
  writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, '.env'), 'SECRET=1\n');
  writeFileSync(join(root, 'bin.dat'), Buffer.from([0x89, 0x50, 0x00, 0x01]));
  writeFileSync(join(outside, 'secret.txt'), 'outside secret\n');
  symlinkSync(join(root, 'src', 'a.ts'), join(root, 'inside-link'));
  symlinkSync(join(outside, 'secret.txt'), join(root, 'escape-link'));
  symlinkSync(outside, join(root, 'escape-dir'));
  symlinkSync(join(outside, 'not-yet.txt'), join(root, 'dangling'));
});

afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

const allowAll: WorkspacePolicy = { default: 'allow' };

/** Runs one batch of calls through an agent and returns output and isError per call id. */
async function runCalls(tools: Tool[], calls: Array<readonly [string, unknown, string]>, onEvent?: (e: RunEvent) => void) {
  const model = new ScriptedModel([batch(calls), text('done')]);
  const events = await collect(Runner.stream(new Agent({ name: 'dev', model, tools }), 'go'), onEvent);
  const results = Object.fromEntries(completed(events).map((e) => [e.call.id, e.isError ? { error: e.output } : e.output]));
  return { events, results };
}

describe('workspaceTools: shape', () => {
  it('builds five tools; readers run in parallel, mutators are barriers', () => {
    const tools = workspaceTools({ root });
    expect(tools.map((t) => [t.name, t.parallel, t.source])).toEqual([
      ['read_file', true, 'workspace tools'],
      ['list_dir', true, 'workspace tools'],
      ['write_file', false, 'workspace tools'],
      ['edit_file', false, 'workspace tools'],
      ['shell', false, 'workspace tools'],
    ]);
    expect(workspaceTools({ root, tools: ['read_file', 'list_dir'] }).map((t) => t.name)).toEqual(['read_file', 'list_dir']);
  });

  it('rejects a bad root, tool name or policy with a UserError', () => {
    expect(() => workspaceTools({ root: join(base, 'missing') })).toThrow(new UserError(`Workspace root '${join(base, 'missing')}' does not exist.`));
    expect(() => workspaceTools({ root: join(root, 'README.md') })).toThrow(`Workspace root '${join(root, 'README.md')}' is not a directory.`);
    expect(() => workspaceTools({ root, tools: ['rm' as never] })).toThrow("Unknown workspace tool 'rm': use read_file, list_dir, write_file, edit_file, shell.");
    expect(() => workspaceTools({ root, policy: { default: 'yes' as never } })).toThrow(`Workspace policy: default must be 'allow', 'ask' or 'deny', got "yes".`);
    expect(() => workspaceTools({ root, policy: { rules: [{ tool: 'delete' as never, decision: 'deny' }] } })).toThrow("Workspace policy: unknown tool 'delete' in rules[0].");
    expect(() => workspaceTools({ root, policy: { default: { shel: 'deny' } as never } })).toThrow("Workspace policy: unknown tool 'shel' in default.");
  });
});

describe('workspaceTools: file tools', () => {
  it('read_file reads whole files and line ranges, and refuses directories, missing, binary and oversized files', async () => {
    const { results } = await runCalls(workspaceTools({ root, policy: allowAll, maxReadBytes: 100 }), [
      ['read_file', { path: 'README.md' }, 'whole'],
      ['read_file', { path: 'README.md', offset: 2, limit: 2 }, 'range'],
      ['read_file', { path: './src/../README.md', offset: 4 }, 'tail'],
      ['read_file', { path: 'inside-link' }, 'link'],
      ['read_file', { path: 'src' }, 'dir'],
      ['read_file', { path: 'nope.txt' }, 'missing'],
      ['read_file', { path: 'bin.dat' }, 'binary'],
    ]);
    expect(results).toEqual({
      whole: '# title\nline 2\nline 3\nline 4\n',
      range: 'line 2\nline 3',
      tail: 'line 4\n',
      link: 'export const a = 1;\n',
      dir: { error: "Tool error: 'src' is a directory.\n  hint: use list_dir for directories" },
      missing: { error: "Tool error: 'nope.txt' does not exist." },
      binary: { error: "Tool error: 'bin.dat' looks like a binary file." },
    });
    writeFileSync(join(root, 'big.txt'), 'x'.repeat(101));
    const big = await runCalls(workspaceTools({ root, policy: allowAll, maxReadBytes: 100 }), [['read_file', { path: 'big.txt' }, 'big']]);
    expect(big.results.big).toEqual({ error: "Tool error: 'big.txt' has 101 bytes, over the read limit of 100." });
  });

  it('list_dir lists sorted entries with / for directories and @ for links', async () => {
    const { results } = await runCalls(workspaceTools({ root, policy: allowAll }), [
      ['list_dir', {}, 'root'],
      ['list_dir', { path: 'src' }, 'src'],
      ['list_dir', { path: 'empty' }, 'empty'],
    ]);
    expect(results).toEqual({
      root: ['.env', 'README.md', 'bin.dat', 'dangling@', 'empty/', 'escape-dir@', 'escape-link@', 'inside-link@', 'src/'].join('\n'),
      src: 'a.ts',
      empty: '(empty directory)',
    });
  });

  it('write_file creates parents and files, overwrites, and refuses directories', async () => {
    const { results } = await runCalls(workspaceTools({ root, policy: allowAll }), [
      ['write_file', { path: 'notes/today/todo.md', content: 'ship it\n' }, 'create'],
      ['write_file', { path: 'README.md', content: 'new readme — ✓' }, 'overwrite'],
      ['write_file', { path: 'src', content: 'x' }, 'dir'],
    ]);
    expect(results).toEqual({
      create: "Created 'notes/today/todo.md' (8 bytes).",
      overwrite: "Overwrote 'README.md' (18 bytes).",
      dir: { error: "Tool error: 'src' is a directory." },
    });
    expect(readFileSync(join(root, 'notes/today/todo.md'), 'utf8')).toBe('ship it\n');
    expect(readFileSync(join(root, 'README.md'), 'utf8')).toBe('new readme — ✓');
  });

  it('edit_file replaces exactly one occurrence unless replace_all, literally', async () => {
    writeFileSync(join(root, 'conf.txt'), 'port=1\nhost=a\nport=1\n');
    const { results } = await runCalls(workspaceTools({ root, policy: allowAll }), [
      ['edit_file', { path: 'conf.txt', old_text: 'host=a', new_text: 'host=$&b' }, 'unique'],
      ['edit_file', { path: 'conf.txt', old_text: 'port=1', new_text: 'port=2' }, 'ambiguous'],
      ['edit_file', { path: 'conf.txt', old_text: 'port=1', new_text: 'port=2', replace_all: true }, 'all'],
      ['edit_file', { path: 'conf.txt', old_text: 'absent', new_text: 'x' }, 'absent'],
      ['edit_file', { path: 'nope.txt', old_text: 'a', new_text: 'b' }, 'missing'],
    ]);
    expect(results).toEqual({
      unique: "Replaced 1 occurrence in 'conf.txt'.",
      ambiguous: { error: "Tool error: old_text occurs 2 times in 'conf.txt'.\n  hint: include more surrounding text to make it unique, or set replace_all" },
      all: "Replaced 2 occurrences in 'conf.txt'.",
      absent: { error: "Tool error: old_text was not found in 'conf.txt'.\n  hint: read the file first and copy the text exactly, whitespace included" },
      missing: { error: "Tool error: 'nope.txt' does not exist." },
    });
    expect(readFileSync(join(root, 'conf.txt'), 'utf8')).toBe('port=2\nhost=$&b\nport=2\n');
  });

  it('refuses .. and absolute paths outside the root and symlinks that lead out, also for files not yet written', async () => {
    const hint = '\n  hint: use a path relative to the workspace root, without leading .. segments';
    const { results } = await runCalls(workspaceTools({ root, policy: allowAll }), [
      ['read_file', { path: '../outside/secret.txt' }, 'dotdot'],
      ['read_file', { path: join(outside, 'secret.txt') }, 'absolute'],
      ['read_file', { path: join(root, 'src', 'a.ts') }, 'absolute-inside'],
      ['read_file', { path: 'escape-link' }, 'file-link'],
      ['read_file', { path: 'escape-dir/secret.txt' }, 'dir-link'],
      ['list_dir', { path: 'escape-dir' }, 'list-link'],
      ['list_dir', { path: 'src/../..' }, 'list-up'],
      ['write_file', { path: 'escape-dir/new.txt', content: 'x' }, 'write-through-dir'],
      ['write_file', { path: 'dangling', content: 'x' }, 'write-dangling'],
      ['edit_file', { path: 'escape-link', old_text: 'outside', new_text: 'pwned' }, 'edit-link'],
    ]);
    expect(results).toEqual({
      dotdot: { error: `Tool error: path '../outside/secret.txt' is outside the workspace.${hint}` },
      absolute: { error: `Tool error: path '${join(outside, 'secret.txt')}' is outside the workspace.${hint}` },
      'absolute-inside': 'export const a = 1;\n',
      'file-link': { error: "Tool error: path 'escape-link' leads outside the workspace through a symbolic link." },
      'dir-link': { error: "Tool error: path 'escape-dir/secret.txt' leads outside the workspace through a symbolic link." },
      'list-link': { error: "Tool error: path 'escape-dir' leads outside the workspace through a symbolic link." },
      'list-up': { error: `Tool error: path 'src/../..' is outside the workspace.${hint}` },
      'write-through-dir': { error: "Tool error: path 'escape-dir/new.txt' leads outside the workspace through a symbolic link." },
      'write-dangling': { error: "Tool error: path 'dangling' leads outside the workspace through a symbolic link." },
      'edit-link': { error: "Tool error: path 'escape-link' leads outside the workspace through a symbolic link." },
    });
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'not-yet.txt'))).toBe(false);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
  });

  it('readers run in parallel; a writer waits for them and runs alone', async () => {
    const { events } = await runCalls(workspaceTools({ root, policy: allowAll }), [
      ['read_file', { path: 'README.md' }, 'r1'],
      ['list_dir', { path: 'src' }, 'r2'],
      ['write_file', { path: 'out.txt', content: 'x' }, 'w'],
      ['read_file', { path: 'out.txt' }, 'r3'],
    ]);
    const order = trace(events).filter((t) => /^tool_call_(started|completed)/.test(t));
    const at = (t: string) => order.indexOf(t);
    expect(at('tool_call_started:r2')).toBeLessThan(at('tool_call_completed:r1')); // both readers were in flight together
    expect(at('tool_call_started:w')).toBeGreaterThan(Math.max(at('tool_call_completed:r1'), at('tool_call_completed:r2')));
    expect(at('tool_call_started:r3')).toBeGreaterThan(at('tool_call_completed:w'));
    expect(completed(events).find((e) => e.call.id === 'r3')!.output).toBe('x');
  });
});

describe('workspaceTools: shell', () => {
  it('runs in the root and reports exit code, stdout and stderr; a non-zero exit is an error result', async () => {
    const { results, events } = await runCalls(workspaceTools({ root, policy: allowAll }), [
      ['shell', { command: 'pwd; ls src' }, 'pwd'],
      ['shell', { command: 'echo out; echo err >&2; exit 3' }, 'fail'],
      ['shell', { command: 'true' }, 'quiet'],
    ]);
    expect(results).toEqual({
      pwd: `exit code 0\nstdout:\n${root}\na.ts`,
      fail: { error: 'exit code 3\nstdout:\nout\nstderr:\nerr' },
      quiet: 'exit code 0',
    });
    expect(completed(events).find((e) => e.call.id === 'fail')!.details).toEqual({ exitCode: 3, signal: null, stdout: 'out\n', stderr: 'err\n', clipped: false });
  });

  it('cuts output over maxOutputBytes and kills commands that pass timeoutMs', async () => {
    const tools = workspaceTools({ root, policy: allowAll, shell: { maxOutputBytes: 4, timeoutMs: 200 } });
    const { results } = await runCalls(tools, [
      ['shell', { command: 'printf 1234567890' }, 'long'],
      ['shell', { command: 'sleep 30; echo never' }, 'slow'],
    ]);
    expect(results).toEqual({
      long: 'exit code 0\nstdout:\n1234\n[output over 4 bytes per stream was dropped]',
      slow: { error: "Tool error: tool 'shell' timed out after 200 ms" },
    });
  });
});

describe('workspaceTools: policy', () => {
  const policy: WorkspacePolicy = {
    default: 'allow',
    rules: [
      { tool: 'shell', match: /^rm /, decision: 'deny', reason: 'deleting is not allowed' },
      { tool: 'shell', decision: 'ask' },
      { tool: ['write_file', 'edit_file'], match: /^src\//, decision: 'ask' },
      { match: (target) => target === '.env' || target.endsWith('/.env'), decision: 'deny' },
    ],
  };

  it('allow runs, deny is an error result, ask goes through ev.approve()/reject()', async () => {
    const asked: string[] = [];
    const { results } = await runCalls(
      workspaceTools({ root, policy }),
      [
        ['shell', { command: 'rm -rf src' }, 'rm'],
        ['write_file', { path: 'src/new.ts', content: 'new' }, 'approved'],
        ['write_file', { path: 'src/other.ts', content: 'other' }, 'rejected'],
        ['write_file', { path: 'notes.txt', content: 'free' }, 'free'],
        ['read_file', { path: '.env' }, 'env'],
        ['read_file', { path: 'src/../.env' }, 'env-sneaky'],
        ['shell', { command: 'echo hi' }, 'echo'],
      ],
      (e) => {
        if (e.type !== 'approval_required') return;
        asked.push(`${e.call.id}:${JSON.stringify(e.args)}`);
        if (e.call.id === 'rejected') e.reject();
        else e.approve();
      },
    );
    expect(asked).toEqual(['approved:{"path":"src/new.ts","content":"new"}', 'rejected:{"path":"src/other.ts","content":"other"}', 'echo:{"command":"echo hi"}']);
    expect(results).toEqual({
      rm: { error: "Tool error: denied by workspace policy: shell command 'rm -rf src' (deleting is not allowed)." },
      approved: "Created 'src/new.ts' (3 bytes).",
      rejected: { error: "Tool error: approval denied for tool 'write_file'." },
      free: "Created 'notes.txt' (4 bytes).",
      env: { error: "Tool error: denied by workspace policy: read_file on '.env'." },
      'env-sneaky': { error: "Tool error: denied by workspace policy: read_file on '.env'." },
      echo: 'exit code 0\nstdout:\nhi',
    });
    expect(existsSync(join(root, 'src', 'a.ts'))).toBe(true);
    expect(existsSync(join(root, 'src', 'other.ts'))).toBe(false);
  });

  it('by default reads are allowed and writes ask; Runner.run without a decision denies them', async () => {
    const model = new ScriptedModel([
      batch([
        ['read_file', { path: 'src/a.ts' }, 'read'],
        ['write_file', { path: 'x.txt', content: 'x' }, 'write'],
        ['shell', { command: 'touch y.txt' }, 'shell'],
      ]),
      text('done'),
    ]);
    const result = await Runner.run(new Agent({ name: 'dev', model, tools: workspaceTools({ root }) }), 'go');
    // Results enter the transcript in completion order.
    expect(Object.fromEntries(result.transcript.flatMap((m) => (m.role === 'tool' ? [[m.callId, m.content]] : [])))).toEqual({
      read: 'export const a = 1;\n',
      write: "Tool error: approval denied for tool 'write_file'.",
      shell: "Tool error: approval denied for tool 'shell'.",
    });
    expect(existsSync(join(root, 'x.txt'))).toBe(false);
    expect(existsSync(join(root, 'y.txt'))).toBe(false);
  });

  it('an escaping path is refused without asking for approval', async () => {
    const asked: string[] = [];
    const { results } = await runCalls(workspaceTools({ root }), [['write_file', { path: '../outside/x.txt', content: 'x' }, 'w']], (e) => {
      if (e.type === 'approval_required') asked.push(e.call.id);
    });
    expect(asked).toEqual([]);
    expect(results.w).toEqual({ error: "Tool error: path '../outside/x.txt' is outside the workspace.\n  hint: use a path relative to the workspace root, without leading .. segments" });
  });

  it('an approval covers the target it was asked for: a symlink swapped while waiting is refused', async () => {
    mkdirSync(join(root, 'public'));
    mkdirSync(join(root, 'private'));
    symlinkSync(join(root, 'public'), join(root, 'current'));
    const { results } = await runCalls(workspaceTools({ root }), [['write_file', { path: 'current/page.html', content: '<p>' }, 'w']], (e) => {
      if (e.type !== 'approval_required') return;
      unlinkSync(join(root, 'current'));
      symlinkSync(join(root, 'private'), join(root, 'current'));
      e.approve();
    });
    expect(results.w).toEqual({ error: "Tool error: write_file on 'private/page.html' needs an approval that was not given for this target." });
    expect(existsSync(join(root, 'private', 'page.html'))).toBe(false);
  });

  it('a direct execute of an "ask" call without the approval step is refused', async () => {
    const write = workspaceTools({ root, tools: ['write_file'] })[0]!;
    const ctx = { runId: 'r', callId: 'c', signal: new AbortController().signal } as never;
    const out = (await write.execute({ path: 'x.txt', content: 'x' }, ctx)) as { content: string; isError: boolean };
    expect(out).toMatchObject({ isError: true, content: "Tool error: write_file on 'x.txt' needs an approval that was not given for this target." });
    expect(existsSync(join(root, 'x.txt'))).toBe(false);
  });

  it('decideWorkspacePolicy: first matching rule, then the default (one decision or per tool)', () => {
    expect(decideWorkspacePolicy(undefined, 'read_file', 'a')).toEqual({ decision: 'allow', reason: undefined });
    expect(decideWorkspacePolicy(undefined, 'edit_file', 'a')).toEqual({ decision: 'ask', reason: undefined });
    expect(decideWorkspacePolicy({ default: { shell: 'deny' } }, 'shell', 'ls').decision).toBe('deny');
    expect(decideWorkspacePolicy({ default: { shell: 'deny' } }, 'write_file', 'a').decision).toBe('ask');
    const global = /^docs\//g;
    const p: WorkspacePolicy = { default: 'deny', rules: [{ match: global, decision: 'allow' }, { match: /^docs\//, decision: 'ask' }] };
    // A global RegExp is reset before each test, so it matches every time.
    expect([1, 2, 3].map(() => decideWorkspacePolicy(p, 'read_file', 'docs/a.md').decision)).toEqual(['allow', 'allow', 'allow']);
    expect(decideWorkspacePolicy(p, 'read_file', 'src/a.ts').decision).toBe('deny');
  });
});

describe('workspaceTools with an agent', () => {
  it('a model can list, read, edit and verify in one run', async () => {
    const model = new ScriptedModel([
      call('list_dir', {}, 'ls'),
      call('read_file', { path: 'src/a.ts' }, 'cat'),
      call('edit_file', { path: 'src/a.ts', old_text: '= 1', new_text: '= 2' }, 'edit'),
      call('shell', { command: 'cat src/a.ts' }, 'check'),
      text('a is now 2'),
    ]);
    const result = await Runner.run(new Agent({ name: 'dev', model, tools: workspaceTools({ root, policy: allowAll }) }), 'set a to 2');
    expect(result.output).toBe('a is now 2');
    expect(result.transcript.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      '.env\nREADME.md\nbin.dat\ndangling@\nempty/\nescape-dir@\nescape-link@\ninside-link@\nsrc/',
      'export const a = 1;\n',
      "Replaced 1 occurrence in 'src/a.ts'.",
      'exit code 0\nstdout:\nexport const a = 2;',
    ]);
  });
});
