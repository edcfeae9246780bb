import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { describe, expect, it } from 'vitest';

function startCli(args: string[], env: Record<string, string>): { child: ChildProcessWithoutNullStreams; output: () => string; until: (text: string) => Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'start', ...args], { env: { ...process.env, TROUPE_PORT: '0', ...env } });
  let stdout = '';
  const waiters: Array<{ text: string; resolve: () => void }> = [];
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    for (const w of [...waiters]) if (stdout.includes(w.text)) w.resolve();
  });
  const until = (text: string): Promise<void> =>
    new Promise((resolve, reject) => {
      if (stdout.includes(text)) return resolve();
      waiters.push({ text, resolve });
      child.on('exit', (code) => reject(new Error(`exited early with ${code}: ${stdout}`)));
    });
  return { child, output: () => stdout, until };
}

describe('npm start (troupe start)', () => {
  it('--no-wait: runs at once; the terminal prints the server deadline, and an undecided booking is denied and reported as not made', async () => {
    const cli = startCli(['--no-wait'], { TROUPE_DEMO_APPROVAL_TIMEOUT_MS: '300' });
    try {
      await cli.until('press Ctrl+C to stop');
    } finally {
      cli.child.kill('SIGKILL');
    }
    const stdout = cli.output();
    expect(stdout).toMatch(/inspector: http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+/);
    expect(stdout).toContain('⇄ handoff Triage → Travel specialist');
    expect(stdout).toMatch(/\? book_hotel needs an approval: Approve or Deny in the inspector; denied automatically at .+ \(in 0 s\) if undecided/);
    expect(stdout).toContain("✗ call_book → Tool error: approval denied for tool 'book_hotel'.");
    expect(stdout).toContain('output: Rome is 24 °C and clear and the 17:40 flight costs €64, but the hotel was not booked: the booking was denied.');
    expect(stdout).not.toContain('your hotel is booked');
  });

  it('waits for the inspector page before starting the run; approved through the API, the hotel is booked', async () => {
    const cli = startCli([], {});
    try {
      await cli.until('waiting for the inspector page');
      const match = /listening on (http:\/\/[\d.:]+)[\s\S]*token:\s+(\S+)/.exec(cli.output())!;
      const [, url, token] = match;
      const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      expect(((await (await fetch(`${url}/api/runs`, { headers })).json()) as { runs: unknown[] }).runs).toEqual([]);
      // A page connects to the feed: the run starts.
      const controller = new AbortController();
      const feed = await fetch(`${url}/api/inspect`, { headers, signal: controller.signal });
      await cli.until('needs an approval');
      expect(cli.output()).toContain('starting the demo run through POST /api/chat');
      expect(cli.output()).toMatch(/denied automatically at .+ \(in 1[12]\d s\) if undecided/);
      const [run] = ((await (await fetch(`${url}/api/runs`, { headers })).json()) as { runs: Array<{ runId: string; pendingApprovals: Array<{ approvalId: string }> }> }).runs;
      const res = await fetch(`${url}/api/chat/approve`, { method: 'POST', headers, body: JSON.stringify({ runId: run!.runId, approvalId: run!.pendingApprovals[0]!.approvalId, decision: 'approve' }) });
      expect(res.status).toBe(200);
      await cli.until('press Ctrl+C to stop');
      controller.abort();
      void feed.body?.cancel().catch(() => undefined);
    } finally {
      cli.child.kill('SIGKILL');
    }
    expect(cli.output()).toContain('✓ call_book → Booked 2 nights in Rome (confirmation HX-2041).');
    expect(cli.output()).toContain('output: Rome is 24 °C and clear, the 17:40 flight costs €64, and your hotel is booked for 2 nights (HX-2041).');
  });
});
