import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

const PAGE_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
};

/**
 * Where the built inspector page lives: `dist/inspector/` beside the compiled server, or
 * the repository's `dist/inspector/` when running from source (tsx).
 */
export function findInspectorDir(explicit?: string): string | undefined {
  const candidates = explicit
    ? [resolve(explicit)]
    : [fileURLToPath(new URL('../inspector/', import.meta.url)), fileURLToPath(new URL('../../dist/inspector/', import.meta.url))];
  return candidates.find((dir) => existsSync(join(dir, 'index.html')));
}

const NOT_BUILT = `<!doctype html><meta charset="utf-8"><title>troupe inspector</title>
<h1>troupe inspector</h1><p>The inspector page is not built yet. Run <code>npm run build:inspector</code> and reload.</p>
<p>The API under <code>/api/</code> works without it.</p>`;

/** Serves the page and its assets; never outside the page directory. */
export async function serveStatic(pathname: string, dir: string | undefined, res: ServerResponse, head: boolean): Promise<void> {
  if (!dir) {
    res.writeHead(pathname === '/' || pathname === '/index.html' ? 503 : 404, { 'content-type': 'text/html; charset=utf-8', ...PAGE_HEADERS });
    res.end(head ? undefined : NOT_BUILT);
    return;
  }
  let relative: string;
  try {
    relative = decodeURIComponent(pathname === '/' ? '/index.html' : pathname);
  } catch {
    relative = '/\0';
  }
  const root = resolve(dir);
  const file = resolve(root, `.${relative}`);
  if ((file !== root && !file.startsWith(root + sep)) || relative.includes('\0')) return notFound(res);
  try {
    const info = await stat(file);
    if (!info.isFile()) return notFound(res);
    const body = await readFile(file);
    res.writeHead(200, {
      'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
      'content-length': body.length,
      // Hashed asset names can be cached; the page itself must be fresh.
      'cache-control': relative.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
      ...PAGE_HEADERS,
    });
    res.end(head ? undefined : body);
  } catch {
    notFound(res);
  }
}

function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
  res.end('Not found');
}
