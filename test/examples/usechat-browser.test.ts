import type { ChildProcess } from 'node:child_process';
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHROMIUM, FLAGS, haveChromium } from '../browser/harness.js';
import { exampleProject, type ExampleProject } from './example-project.js';

let example: ExampleProject;
let server: ChildProcess | undefined;
let browser: Browser | undefined;
beforeAll(() => {
  example = exampleProject('usechat-browser');
});
afterAll(async () => {
  await browser?.close();
  if (server?.exitCode === null && server.signalCode === null) {
    const exited = new Promise((resolve) => server!.once('exit', resolve));
    process.kill(-server.pid!, 'SIGKILL');
    await exited;
  }
  example?.remove();
});

/** Starts `npm start` (vite build, then the page and troupe servers) and resolves with the page's URL. */
function start(): Promise<string> {
  server = example.spawn('start', { PORT: '0' });
  let output = '';
  return new Promise((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      const match = /chat page: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output);
      if (match) resolve(match[1]!);
    };
    server!.stdout!.on('data', read);
    server!.stderr!.on('data', read);
    server!.once('exit', (code) => reject(new Error(`npm start exited (${code}) before the page was up:\n${output}`)));
  });
}

describe('examples/usechat-browser', () => {
  it('declares troupe, zod and ai (the chat client), and builds with vite', () => {
    expect(example.manifest).toMatchObject({ private: true, type: 'module', scripts: { start: 'vite build && tsx server.ts' } });
    expect(example.manifest.dependencies.troupe).toBe('file:../..');
    expect(Object.keys(example.manifest.dependencies).sort()).toEqual(['ai', 'troupe', 'zod']);
    expect(Object.keys(example.manifest.devDependencies!).sort()).toEqual(['@types/node', 'tsx', 'typescript', 'vite']);
  });

  it('typechecks (server and page) against the built package', async () => {
    expect(await example.typecheck()).toBe('');
  }, 60_000);

  it.skipIf(!haveChromium)('in Chromium: the refund waits with Approve / Reject buttons; Approve runs it, Reject denies it', async () => {
    const url = await start();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    // Loopback only: the page loads nothing from anywhere but its own server.
    const hosts = new Set<string>();
    page.on('request', (request) => hosts.add(new URL(request.url()).host));
    await page.goto(url);

    const messages = page.locator('#messages');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('button', { name: 'Approve' }).waitFor();
    expect(await messages.locator('.message').allInnerTexts()).toEqual([
      'You: Please refund order A123 ($60).',
      'refund {"orderId":"A123","cents":6000}: approval-requested\nApproveReject',
    ]);
    await page.getByRole('button', { name: 'Approve' }).click();
    await messages.getByText('Agent: Your refund of $60.00 on order A123 is on its way.').waitFor();
    await page.locator('#status:empty').waitFor({ state: 'attached' });
    expect(await messages.locator('.message').allInnerTexts()).toEqual([
      'You: Please refund order A123 ($60).',
      'refund {"orderId":"A123","cents":6000}: output-available\n→ refunded $60.00 on A123\n\nAgent: Your refund of $60.00 on order A123 is on its way.',
    ]);

    await page.locator('#input').fill('Refund order A123 again, please.');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('button', { name: 'Reject' }).click();
    await messages.getByText('Agent: The refund was not approved, so order A123 was not refunded.').waitFor();
    expect(await messages.locator('.message').allInnerTexts()).toEqual([
      'You: Please refund order A123 ($60).',
      'refund {"orderId":"A123","cents":6000}: output-available\n→ refunded $60.00 on A123\n\nAgent: Your refund of $60.00 on order A123 is on its way.',
      'You: Refund order A123 again, please.',
      'refund {"orderId":"A123","cents":6000}: output-denied\n→ denied\n\nAgent: The refund was not approved, so order A123 was not refunded.',
    ]);
    expect(errors).toEqual([]);
    expect([...hosts]).toEqual([new URL(url).host]);
  }, 90_000);
});
