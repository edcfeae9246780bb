import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleProject, readmeOutput, type ExampleProject } from './example-project.js';

let example: ExampleProject;
beforeAll(() => {
  example = exampleProject('support-desk');
});
afterAll(() => example?.remove());

describe('examples/support-desk', () => {
  it('declares troupe, zod and the AI SDK provider it loads for a real model, and runs with `npm start`', () => {
    expect(example.manifest).toMatchObject({ private: true, type: 'module', scripts: { start: 'tsx main.ts', explore: 'tsx explore.ts' } });
    expect(example.manifest.dependencies.troupe).toBe('file:../..');
    expect(Object.keys(example.manifest.dependencies).sort()).toEqual(['@ai-sdk/openai-compatible', 'troupe', 'zod']);
  });

  it('typechecks against the built package', async () => {
    expect(await example.typecheck()).toBe('');
  }, 60_000);

  it('npm start: triage hands off, the supervisor approves one refund and rejects the other, technical answers', async () => {
    const output = await example.run('start');
    // What its README says it prints.
    expect(output.trimEnd()).toBe(readmeOutput('support-desk').trimEnd());
    expect(output.split('\n')).toEqual([
      'customer: I was charged twice for order A123, please refund the duplicate.',
      '  [Triage] transfer_to_billing: Transferred to Billing',
      '  handoff: Triage -> Billing',
      '  [Billing] lookup_order: order A123: wireless keyboard, $25.00, charged 2x',
      '  approval: refund {"orderId":"A123","cents":2500,"reason":"duplicate charge"} -> approved',
      '  [Billing] refund: refunded $25.00 on A123',
      'Billing: Done: refunded $25.00 on A123. You will see it on your card in 3-5 days.',
      '',
      'customer: Please refund order B777, the desk arrived broken.',
      '  [Triage] transfer_to_billing: Transferred to Billing',
      '  handoff: Triage -> Billing',
      '  [Billing] lookup_order: order B777: standing desk, $450.00, charged 1x',
      '  approval: refund {"orderId":"B777","cents":45000,"reason":"customer request"} -> rejected',
      "  [Billing] refund: Tool error: approval denied for tool 'refund': refunds over $100 need a manager",
      "Billing: I could not refund order B777 (approval denied for tool 'refund': refunds over $100 need a manager). A manager will get back to you.",
      '',
      'customer: The app crashes when I export a report.',
      '  [Triage] transfer_to_technical: Transferred to Technical',
      '  handoff: Triage -> Technical',
      '  [Technical] search_docs: Exports over 10,000 rows need version 4.2 or later (Settings > About > Update).',
      'Technical: Please update to version 4.2 (Settings > About > Update): exports over 10,000 rows need it.',
      '',
      '',
    ]);
  }, 60_000);

  it('npm run explore: every path of the desk, no invariant broken, and what of the chart they cover', async () => {
    const output = await example.run('explore');
    expect(output.split('\n')).toEqual([
      '49 paths (21 completed, 28 cancelled), 0 break an invariant',
      'run chart, 49 runs: states 18/33 (55%), transitions 21/85 (25%)',
      '',
    ]);
  }, 120_000);

  it('npx troupe serve --agents ./agents.ts (as its README says) serves the desk: a run through the handoff completes', async () => {
    const token = 'example-token-1234';
    const server = spawn(join(example.dir, 'node_modules', '.bin', 'troupe'), ['serve', '--agents', './agents.ts', '--db', 'off', '--port', '0', '--token', token, '--inspect', 'off'], {
      cwd: example.dir,
      env: { ...process.env, OPENAI_API_KEY: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise((resolve) => server.once('exit', resolve));
    try {
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        const read = (chunk: Buffer) => {
          output += chunk.toString('utf8');
          const match = /listening on (http:\/\/\S+)[\s\S]*agents: +triage\n/.exec(output);
          if (match) resolve(match[1]!);
        };
        server.stdout.on('data', read);
        server.stderr.on('data', read);
        server.once('exit', () => reject(new Error(`troupe serve exited:\n${output}`)));
      });
      const response = await fetch(`${url}/api/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ agent: 'triage', input: 'The app crashes when I export a report.' }),
      });
      const events = (await response.text()).split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as { type: string; output?: string });
      expect(events.filter((e) => ['handoff_occurred', 'tool_call_completed', 'run_completed', 'run_failed'].includes(e.type)).map((e) => e.type)).toEqual([
        'tool_call_completed',
        'handoff_occurred',
        'tool_call_completed',
        'run_completed',
      ]);
      expect(events.at(-1)!.output).toBe('Please update to version 4.2 (Settings > About > Update): exports over 10,000 rows need it.');
    } finally {
      server.kill('SIGKILL');
      await exited;
    }
  }, 60_000);
});
