#!/usr/bin/env node
import { UserError } from '../errors.js';
import type { Model } from '../models/model.js';
import { runDemo } from './demo.js';
import { modelFromEnv } from './model-from-env.js';

const USAGE = `usage: troupe <command>

commands:
  demo    run the demo agents and print their event stream

environment:
  TROUPE_MODEL=openai-compatible:<model>   use a real model (Ollama, vLLM, llama.cpp server, …)
  TROUPE_BASE_URL=http://localhost:11434/v1 the server's OpenAI-compatible API root
  TROUPE_API_KEY=…                          sent as a bearer token (optional)
  Without TROUPE_MODEL the demo runs on the scripted model and says so.
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
