import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

describe('npm start (troupe start)', () => {
  it('serves the inspector, runs the demo through the API, and the gated booking runs once approved', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'start'], {
      env: { ...process.env, TROUPE_PORT: '0', TROUPE_DEMO_AUTO_APPROVE_MS: '200' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    const done = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.includes('press Ctrl+C to stop')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`exited early with ${code}: ${stdout}`)));
    });
    try {
      await done;
    } finally {
      child.kill('SIGKILL');
    }
    expect(stdout).toMatch(/inspector: http:\/\/127\.0\.0\.1:\d+\/#token=[\w-]+/);
    expect(stdout).toContain('⇄ handoff Triage → Travel specialist');
    expect(stdout).toContain('? book_hotel needs an approval: click Approve in the inspector');
    expect(stdout).toContain('(approved call_book through the API)');
    expect(stdout).toContain('✓ call_book → Booked 2 nights in Rome (confirmation HX-2041).');
    expect(stdout).toContain('output: Rome is 24 °C and clear');
  });
});
