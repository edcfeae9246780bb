#!/usr/bin/env node
import { UserError } from '../errors.js';
import type { Model } from '../models/model.js';
import { db } from './db.js';
import { runDemo } from './demo.js';
import { modelFromEnv } from './model-from-env.js';
import { SERVE_USAGE, serve } from './serve.js';
import { startDemo } from './start.js';
import { worker } from './worker.js';

const USAGE = `usage: troupe <command>

commands:
  start   the demo server with the live inspector; once the page is open, one demo run printed here (npm start)
  demo    run the demo agents in this process and print their event stream
  serve   the HTTP API and inspector for your agents (troupe serve --help)
  worker  run enqueued runs from PostgreSQL: troupe worker --db postgres://… --agents ./agents.js (--help)
  db      troupe db migrate --db postgres://…: create or upgrade the PostgreSQL tables; troupe db prune: retention of stored run events (troupe db --help)

environment:
  TROUPE_MODEL=openai-compatible:<model>   use a real model (Ollama, vLLM, llama.cpp server, …)
  TROUPE_BASE_URL=http://localhost:11434/v1 the server's OpenAI-compatible API root
  TROUPE_API_KEY=…                          sent as a bearer token (optional)
  Without TROUPE_MODEL the demo runs on the scripted model and says so.
  TROUPE_PORT (start: default 4317), TROUPE_DEMO_APPROVAL_TIMEOUT_MS (start: undecided approvals are
  denied after this long, default 120000; the terminal and the page show the same deadline)

options of start:
  --no-wait   start the demo run at once instead of waiting for the inspector page (or Enter)
`;

async function main(argv: string[]): Promise<number> {
  const [command = 'demo'] = argv;
  switch (command) {
    case 'demo': {
      let model: Model | undefined;
      try {
        model = modelFromEnv(process.env);
      } catch (error) {
        if (!(error instanceof UserError)) throw error;
        process.stderr.write(`troupe: ${error.message}\n`);
        return 2;
      }
      await runDemo(console.log, model);
      return 0;
    }
    case 'start':
      await startDemo({
        ...(process.env.TROUPE_PORT ? { port: Number(process.env.TROUPE_PORT) } : {}),
        ...(process.env.TROUPE_DEMO_APPROVAL_TIMEOUT_MS ? { approvalTimeoutMs: Number(process.env.TROUPE_DEMO_APPROVAL_TIMEOUT_MS) } : {}),
        wait: argv.includes('--no-wait') ? 'none' : 'page',
      });
      return 0;
    case 'serve':
      if (argv.includes('--help') || argv.includes('-h')) {
        process.stdout.write(SERVE_USAGE);
        return 0;
      }
      try {
        await serve(argv.slice(1));
      } catch (error) {
        process.stderr.write(`troupe serve: ${(error as Error).message}\n`);
        return 2;
      }
      return 0;
    case 'db':
      return db(argv.slice(1), (line) => process.stdout.write(line.endsWith('\n') ? line : `${line}\n`), (line) => process.stderr.write(`${line}\n`));
    case 'worker':
      return worker(argv.slice(1), (line) => process.stdout.write(line.endsWith('\n') ? line : `${line}\n`), (line) => process.stderr.write(`${line}\n`));
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return 0;
    default:
      process.stderr.write(`troupe: unknown command '${command}'\n\n${USAGE}`);
      return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
