import { coverageOnChart, coverageSummary, type ChartCoverageInput } from '../../src/inspect/coverage-view.js';
import type { DefinitionRecord } from '../../src/inspect/wire.js';
import { byId, h } from './dom.js';
import { chartFor, highlight, markCoverage } from './statechart.js';

/** What the chart shows: a definition and where the run is in it. */
export interface ChartView {
  readonly definition: DefinitionRecord;
  readonly active: readonly string[];
  readonly transitions: readonly string[];
  readonly finished: boolean;
  /** `inspected` (live XState inspection), `events` (derived from run events) or `replay` (stored log at step N). */
  readonly source: 'inspected' | 'events' | 'replay';
  readonly label: string;
  readonly runId: string;
}

/** What the coverage switch gave the panel: a report to lay onto the chart, or why there is none. */
export type CoverageState = { readonly report: ChartCoverageInput } | { readonly error: string };

/**
 * The statechart panel: 1:1 by default (state names 13 px, edge labels 11 px), zoom in/out,
 * fit to width, scroll to the active state, and "collapse inactive" (compound states with
 * nothing active drawn as one box). With coverage on, it shows the run chart with a coverage
 * report laid onto it instead of a run.
 */
export class ChartPanel {
  scale = 1;
  fit = false;
  collapse = false;
  private shown: SVGSVGElement | undefined;
  private lastLeaf = '';
  private pending = 0;
  private coverage: CoverageState | undefined;

  /** `definition`: the run chart's definition, once the feed sent it (coverage needs no run). */
  constructor(
    private readonly container: HTMLElement,
    private readonly definition: () => DefinitionRecord | undefined,
  ) {
    byId('chart-in').addEventListener('click', () => this.zoom(1.25));
    byId('chart-out').addEventListener('click', () => this.zoom(0.8));
    byId('zoom').addEventListener('click', () => {
      this.fit = !this.fit;
      byId('zoom').textContent = this.fit ? '1:1' : 'fit';
      this.apply();
    });
    byId('zoom-active').addEventListener('click', () => {
      this.fit = false;
      this.scale = 1;
      byId('zoom').textContent = 'fit';
      this.apply();
      this.scrollToActive();
    });
    byId<HTMLInputElement>('collapse').addEventListener('change', (event) => {
      this.collapse = (event.target as HTMLInputElement).checked;
      this.lastLeaf = '';
    });
  }

  private zoom(factor: number): void {
    this.fit = false;
    byId('zoom').textContent = 'fit';
    this.scale = Math.min(3, Math.max(0.25, Math.round(this.scale * factor * 100) / 100));
    this.apply();
  }

  /** Coverage on (a report, or the error to show instead) or off (undefined): the next `show` draws it. */
  setCoverage(coverage: CoverageState | undefined): void {
    this.coverage = coverage;
    this.lastLeaf = '';
    const summary = byId('coverage-summary');
    summary.hidden = coverage === undefined;
    if (!coverage) summary.textContent = '';
  }

  /** Draws `view` (layout is async and cached); `message` when there is nothing to draw. With coverage on, draws that instead. */
  async show(view: ChartView | undefined, message: string): Promise<void> {
    if (this.coverage) return this.showCoverage(this.coverage);
    const state = byId('chart-state');
    if (!view) {
      this.shown = undefined;
      state.textContent = '';
      if (this.container.textContent !== message) this.container.replaceChildren(h('p', { class: 'muted' }, message));
      return;
    }
    const ticket = ++this.pending;
    let chart: SVGSVGElement;
    try {
      chart = await chartFor(view.definition, this.collapse ? view.active : undefined);
    } catch (error) {
      this.container.replaceChildren(h('p', { class: 'muted' }, `Layout failed: ${(error as Error).message}`));
      return;
    }
    if (ticket !== this.pending) return; // a newer draw started meanwhile
    if (this.shown !== chart) {
      this.container.replaceChildren(chart);
      this.shown = chart;
      this.lastLeaf = '';
    }
    highlight(chart, view.active, view.transitions, view.finished);
    this.apply();
    const leaf = view.active.at(-1) ?? '';
    this.container.dataset.active = view.active.join(' ');
    if (!this.fit && leaf !== this.lastLeaf) this.scrollToActive();
    this.lastLeaf = leaf;
    this.container.dataset.runId = view.runId;
    this.container.dataset.source = view.source;
    state.textContent = view.label;
  }

  private async showCoverage(coverage: CoverageState): Promise<void> {
    const summary = byId('coverage-summary');
    byId('chart-state').textContent = 'coverage';
    const definition = this.definition();
    const problem = 'error' in coverage ? coverage.error : definition ? undefined : 'Waiting for the run chart from the server…';
    if (problem !== undefined || !definition || 'error' in coverage) {
      this.shown = undefined;
      summary.textContent = problem ?? '';
      summary.dataset.kind = 'error';
      this.container.replaceChildren(h('p', { class: 'muted' }, problem ?? ''));
      return;
    }
    const view = coverageOnChart(definition.root, coverage.report);
    const ticket = ++this.pending;
    let chart: SVGSVGElement;
    try {
      chart = await chartFor(definition, undefined, view);
    } catch (error) {
      this.container.replaceChildren(h('p', { class: 'muted' }, `Layout failed: ${(error as Error).message}`));
      return;
    }
    if (ticket !== this.pending || this.coverage !== coverage) return;
    if (this.shown !== chart) {
      this.container.replaceChildren(chart);
      this.shown = chart;
      highlight(chart, [], [], false);
      markCoverage(chart, view);
    }
    this.apply();
    this.container.dataset.source = 'coverage';
    delete this.container.dataset.active;
    delete this.container.dataset.runId;
    summary.textContent = coverageSummary(view);
    summary.dataset.kind = view.unmatched.states.length + view.unmatched.transitions.length > 0 ? 'error' : 'info';
  }

  private apply(): void {
    const chart = this.shown;
    if (!chart) return;
    const [, , w, hgt] = (chart.getAttribute('viewBox') ?? '0 0 400 300').split(' ').map(Number);
    chart.classList.toggle('fit', this.fit);
    chart.setAttribute('width', String(Math.round(w! * this.scale)));
    chart.setAttribute('height', String(Math.round(hgt! * this.scale)));
    this.container.dataset.scale = this.fit ? 'fit' : String(this.scale);
  }

  /** Scrolls the chart box (not the page) so the active leaf state is in the middle. */
  private scrollToActive(): void {
    const leaf = this.container.dataset.active?.split(' ').at(-1);
    const el = leaf ? this.shown?.querySelector<SVGGElement>(`[data-state-id="${CSS.escape(leaf)}"]`) : undefined;
    if (!el) return;
    const box = el.getBoundingClientRect();
    const outer = this.container.getBoundingClientRect();
    this.container.scrollLeft += box.left + box.width / 2 - (outer.left + outer.width / 2);
    this.container.scrollTop += box.top + box.height / 2 - (outer.top + outer.height / 2);
  }
}
