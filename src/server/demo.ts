import { createServer, type ServerOptions, type TroupeServer } from './server.js';

export interface DemoServerOptions extends Partial<Omit<ServerOptions, 'agents'>> {
  /** Where the banner goes (default console.log); pass `() => {}` to stay quiet. */
  readonly out?: (line: string) => void;
}

/**
 * Serves the orchestration demo (triage → travel specialist → research agent as a tool;
 * parallel calls, a retry and a gated hotel booking) with the inspector. The agent is
 * registered as a factory: every run gets a fresh agent tree. Inspection is `always` on so a
 * page opened later still sees whole runs; runs are checkpointed (in memory by default) so
 * the page's replay slider works. The demo (scripted models) loads on call, so
 * importing `troupe/server` loads no test double.
 */
export async function startDemoServer(options: DemoServerOptions = {}): Promise<TroupeServer> {
  const { out = console.log, ...rest } = options;
  const { demoAgent } = await import('../cli/demo.js');
  const { MemoryCheckpointStore } = await import('../store/checkpoint-store.js');
  // Runs are checkpointed (in memory unless a store is given), so the page can replay them.
  // The in-memory log does not outlive the process, so approvals keep the server's 5-minute deadline unless told otherwise.
  const server = await createServer({
    inspect: 'always',
    approvalTimeoutMs: 300_000,
    ...rest,
    checkpointStore: rest.checkpointStore ?? new MemoryCheckpointStore(),
    agents: { demo: demoAgent },
  });
  out(banner(server));
  return server;
}

export function banner(server: TroupeServer): string {
  return [
    `troupe server listening on ${server.url}`,
    `  inspector: ${server.inspectorUrl}`,
    `  token:     ${server.token}  (send "Authorization: Bearer <token>" to ${server.url}/api/…)`,
  ].join('\n');
}
