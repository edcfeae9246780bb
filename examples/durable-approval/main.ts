// Runs the three steps as three processes, one after the other, from a clean slate.
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';

rmSync(new URL('./.data/', import.meta.url), { recursive: true, force: true });
for (const step of ['step-1-start.ts', 'step-2-decide.ts', 'step-3-resume.ts']) {
  console.log(`$ tsx ${step}`);
  const child = spawnSync(process.execPath, ['--import', 'tsx', step], { cwd: new URL('.', import.meta.url), stdio: ['ignore', 'inherit', 'inherit'] });
  console.log(`(exit: ${child.signal ?? child.status})\n`);
}
