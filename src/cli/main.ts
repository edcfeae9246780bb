#!/usr/bin/env node
import { runDemo } from './demo.js';

const USAGE = `usage: troupe <command>

commands:
  demo    run the scripted demo agent and print its event stream
`;

async function main(argv: string[]): Promise<number> {
  const [command = 'demo'] = argv;
  switch (command) {
    case 'demo':
      await runDemo();
      return 0;
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
