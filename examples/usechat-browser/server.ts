// One process: troupe's HTTP API (createServer from troupe/server, the server `troupe serve`
// runs) on a loopback port of its own, and the page's server, which serves the built page
// and forwards /api/* to troupe with the bearer token, so the token never reaches the browser.
import { readFile } from 'node:fs/promises';
import { createServer as createHttpServer, request } from 'node:http';
import { extname } from 'node:path';
import { createServer } from 'troupe/server';
import { agents } from './agents.js';

const troupe = await createServer({ agents, port: 0, inspect: 'off' });
const target = new URL(troupe.url);
const TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml' };

const page = createHttpServer((req, res) => {
  const path = new URL(req.url ?? '/', 'http://page').pathname;
  if (path.startsWith('/api/')) {
    // Forward as it comes, streams included (the chat route answers with Server-Sent Events).
    const forwarded = request(
      { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, host: target.host, authorization: `Bearer ${troupe.token}` } },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
    return;
  }
  const file = path === '/' ? 'index.html' : path.slice(1);
  if (file.includes('..')) return void res.writeHead(400).end();
  readFile(new URL(`./dist/${file}`, import.meta.url)).then(
    (body) => res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body),
    () => res.writeHead(404).end('not found (run npm run build)'),
  );
});
page.listen(Number(process.env.PORT ?? 5173), '127.0.0.1', () => {
  const { port } = page.address() as { port: number };
  console.log(`chat page: http://127.0.0.1:${port}/`);
});

// Ctrl-C: stop both servers.
process.once('SIGINT', () => {
  page.close();
  void troupe.close().then(() => process.exit(0));
});
