import { ApiError, type Api } from './api.js';
import type { ChartPanel } from './chart-panel.js';
import { byId } from './dom.js';

/**
 * The chart's "coverage" switch: shown when the server has a coverage report (`--coverage`,
 * the `coverage` option). Switching it on loads the report afresh (a file rewritten by a test
 * run shows at once) and lays it onto the run chart; off shows the run again.
 */
export async function coverageSwitch(api: Api, chart: ChartPanel, redraw: () => void): Promise<void> {
  const label = byId('coverage-switch');
  const toggle = byId<HTMLInputElement>('coverage');
  try {
    // No report on this server: no switch.
    if ((await api.coverage()).coverage === null) return;
  } catch (error) {
    // No token yet: the page calls this again once it has one. Any other error (a missing file) still shows the switch, which shows the error.
    if (error instanceof ApiError && error.status === 401) return;
  }
  if (!label.hidden) return;
  label.hidden = false;
  toggle.addEventListener('change', () => {
    if (!toggle.checked) {
      chart.setCoverage(undefined);
      redraw();
      return;
    }
    api.coverage().then(
      ({ coverage }) => chart.setCoverage(coverage ? { report: coverage } : { error: 'No coverage to show: this server has no coverage report.' }),
      (error: unknown) => chart.setCoverage({ error: `No coverage to show: ${error instanceof Error ? error.message : String(error)}` }),
    ).finally(() => {
      // Switched off meanwhile: stay off.
      if (!toggle.checked) chart.setCoverage(undefined);
      redraw();
    });
  });
}
