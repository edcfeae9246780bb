import type { ServerRun } from './runs.js';

/** The server's runs: live ones plus the most recent finished ones. */
export class RunRegistry {
  private readonly runs = new Map<string, ServerRun>();

  constructor(private readonly maxRuns: number) {}

  add(run: ServerRun): void {
    this.runs.set(run.id, run);
    if (this.runs.size <= this.maxRuns) return;
    for (const [id, old] of this.runs) {
      if (this.runs.size <= this.maxRuns) break;
      if (old.finished) this.runs.delete(id);
    }
  }

  get(id: string): ServerRun | undefined {
    return this.runs.get(id);
  }

  /** Newest first. */
  list(): ServerRun[] {
    return [...this.runs.values()].reverse();
  }

  active(): ServerRun[] {
    return [...this.runs.values()].filter((run) => !run.finished);
  }
}
