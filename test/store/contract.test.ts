/** The shared store contracts (contract.ts, session-contract.ts) on memory, SQLite and PostgreSQL. */
import { checkpointStoreContract } from './contract.js';
import { memoryHarness, postgresHarness, sqliteHarness } from './harnesses.js';
import { sessionContract } from './session-contract.js';

for (const harness of [memoryHarness, sqliteHarness(), postgresHarness()]) {
  checkpointStoreContract(harness);
  sessionContract(harness);
}
