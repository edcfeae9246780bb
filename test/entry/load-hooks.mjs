// Module loader hooks (run in Node's hooks thread): append every file URL that is loaded
// through the ESM loader to a log file, so the probe can list exactly what an import loaded.
import { appendFileSync } from 'node:fs';

let logFile;

export function initialize(data) {
  logFile = data.logFile;
}

export async function load(url, context, nextLoad) {
  if (url.startsWith('file:')) appendFileSync(logFile, `${url}\n`);
  return nextLoad(url, context);
}
