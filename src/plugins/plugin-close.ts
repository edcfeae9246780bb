/** One set-up plugin's close function, with whose it is (for the report when it fails). */
export interface PluginCloser {
  readonly plugin: string;
  readonly agent: string;
  readonly close: () => void | Promise<void>;
}

/**
 * Calls each close once, last set up first, each awaited before the next. Never rejects: a
 * close that throws changes nothing about the run (it has ended); it is reported as a process
 * warning (code TROUPE_PLUGIN_CLOSE, which Node prints to stderr unless a 'warning' listener
 * takes it) and the next close still runs.
 */
export async function closePluginsInOrder(closers: readonly PluginCloser[]): Promise<void> {
  for (let i = closers.length - 1; i >= 0; i--) {
    const { plugin, agent, close } = closers[i]!;
    try {
      await close();
    } catch (error) {
      const message = error instanceof Error ? error.message || error.name : String(error);
      process.emitWarning(`Plugin '${plugin}' of agent '${agent}': close failed: ${message}`, { code: 'TROUPE_PLUGIN_CLOSE' });
    }
  }
}
