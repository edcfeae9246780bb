import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Shared set-up of the Chromium suites: Debian's Chromium driven by playwright-core (never a
 * browser download), the page built with Vite into a temporary directory. Screenshots go to
 * $TROUPE_ARTIFACTS_DIR (default: the OS temp dir); their paths are printed.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
export const haveChromium = existsSync(CHROMIUM);
if (!haveChromium && process.env.CI) throw new Error(`Chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH.`);
if (!haveChromium) console.warn(`[browser tests skipped] no Chromium at ${CHROMIUM}; apt-get install -y chromium`);

const root = resolve(import.meta.dirname, '../..');
const artifacts = process.env.TROUPE_ARTIFACTS_DIR ?? join(tmpdir(), 'troupe-browser-artifacts');

export interface Harness {
  readonly pageDir: string;
  readonly browser: Browser;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const pageDir = mkdtempSync(join(tmpdir(), 'troupe-inspector-'));
  execFileSync(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(root, 'inspector/vite.config.mjs'), '--outDir', pageDir, '--emptyOutDir'], { cwd: root, stdio: 'pipe' });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS, headless: true });
  mkdirSync(artifacts, { recursive: true });
  return {
    pageDir,
    browser,
    async close() {
      await browser.close();
      rmSync(pageDir, { recursive: true, force: true });
    },
  };
}

/** A page at `url` collecting page errors and console errors (the suites assert there are none). */
export async function openPage(browser: Browser, url: string, width = 1600, height = 1100): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width, height } });
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  await page.goto(url);
  await page.waitForSelector('#conn[data-state="open"]');
  return { page, errors };
}

/** Saves a screenshot (of `selector`, else the whole page) as troupe-inspector-<name>.png. */
export async function shot(page: Page, name: string, selector?: string): Promise<string> {
  const path = join(artifacts, `troupe-inspector-${name}.png`);
  if (selector) await page.locator(selector).screenshot({ path });
  else await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
  return path;
}

/** Text of the details panel's JSON, parsed. */
export async function detailsPayload(page: Page): Promise<any> {
  return JSON.parse((await page.locator('#details .details-json').textContent())!);
}

/**
 * x-extents of elements on screen, measured in one task: the timeline is redrawn while
 * calls run or approvals wait, so elements found by one query may be gone by the next.
 */
export async function spans(page: Page, selectors: string[]): Promise<Array<[number, number]>> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const found = await page.evaluate((list) => {
      const out: Array<[number, number]> = [];
      for (const selector of list) {
        const box = document.querySelector(selector)?.getBoundingClientRect();
        if (!box || box.width === 0) return undefined;
        out.push([box.left, box.right]);
      }
      return out;
    }, selectors);
    if (found) return found;
    await page.waitForTimeout(100);
  }
  throw new Error(`not all visible: ${selectors.join(', ')}`);
}
