import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { startChatServer, textReply, type ChatServer } from './openai-server.js';

const run = promisify(execFile);
let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** The real CLI in its own process (XState production build), with the given environment. */
function cli(env: Record<string, string>) {
  return run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'demo'], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
}

describe('troupe demo model selection', () => {
  it('uses the real model from TROUPE_MODEL / TROUPE_BASE_URL', async () => {
    server = await startChatServer([textReply('Nothing to route here.')]);
    const { stdout } = await cli({ TROUPE_MODEL: 'openai-compatible:tiny', TROUPE_BASE_URL: server.baseURL });
    expect(stdout).toContain('troupe demo: triage → travel specialist → research agent as a tool, on local.chat:tiny.');
    expect(stdout).toContain('output: Nothing to route here.');
    expect(server.requests).toHaveLength(1);
  });

  it('says so when it falls back to the scripted model', async () => {
    const { stdout } = await cli({});
    expect(stdout).toContain('on the scripted model (no API key needed;');
  });

  it('exits 2 with the UserError for a malformed TROUPE_MODEL', async () => {
    const error = await cli({ TROUPE_MODEL: 'gpt-4o' }).catch((e: { code: number; stderr: string }) => e);
    expect(error).toMatchObject({ code: 2, stderr: "troupe: TROUPE_MODEL 'gpt-4o' has no provider: use TROUPE_MODEL=openai-compatible:<model>.\n" });
  });
});
