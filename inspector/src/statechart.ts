import ELK from 'elkjs/lib/elk.bundled.js';
import type { ElkExtendedEdge, ElkLabel, ElkNode } from 'elkjs/lib/elk-api';
import type { DefinitionRecord, WireStateNode, WireTransition } from '../../src/inspect/wire.js';
import { collapseInactive } from '../../src/inspect/chart-collapse.js';
import { wireTransitionKeys, type CoverageOnChart } from '../../src/inspect/coverage-view.js';
import { showDetails } from './details.js';
import { svg } from './dom.js';

/**
 * Draws a machine definition as nested boxes with ELK (layered, hierarchical). Edges:
 * transitions (merged per source/target pair). Pseudo nodes keep ELK away from edges
 * between a compound state and its own descendants:
 * - `<id>::initial` (a dot) points at a compound state's initial child; a transition that
 *   re-enters an ancestor (e.g. `next → #run.turn`) points at that ancestor's dot;
 * - `<id>::any` ("any state") is the source of transitions declared on a compound state
 *   (e.g. the root's `CANCEL`).
 */

const elk = new ELK();
const layouts = new Map<string, Promise<SVGSVGElement>>();

/**
 * The laid-out chart of a definition; with `collapseFor` (the active state ids), compound
 * states with nothing active inside are drawn as single boxes; with `coverage`, every state
 * says how often it was visited and every edge label how often each transition was taken.
 * Layouts are cached per shape.
 */
export function chartFor(definition: DefinitionRecord, collapseFor?: readonly string[], coverage?: CoverageOnChart): Promise<SVGSVGElement> {
  const active = collapseFor ? new Set(collapseFor) : undefined;
  const root = active ? collapseInactive(definition.root, active) : definition.root;
  let key = active ? `${definition.definitionId}|${collapsedKey(definition.root, active)}` : definition.definitionId;
  if (coverage) key += `|coverage ${[...coverage.states.values(), ...coverage.transitions.values()].join(',')}`;
  let layout = layouts.get(key);
  if (!layout) {
    layout = build({ ...definition, root }, coverage);
    layouts.set(key, layout);
  }
  return layout;
}

/** Which compound states are open: the cache key of a collapsed layout. */
function collapsedKey(node: WireStateNode, active: ReadonlySet<string>): string {
  if (node.states.length === 0 || (!active.has(node.id) && node.id.includes('.'))) return '';
  return `${node.id}(${node.states.map((c) => collapsedKey(c, active)).filter(Boolean).join(',')})`;
}

interface EdgeInfo {
  source: string;
  target: string;
  labels: string[];
  keys: string[];
  kinds: Set<WireTransition['kind']>;
}

// Text sizes (px at 1:1): state names 13, sub-lines and edge labels 11 (readable at the default zoom).
const CHAR = 7.6;
const SUB_CHAR = 6.5;
const LABEL_CHAR = 6.3;

async function build(definition: DefinitionRecord, coverage: CoverageOnChart | undefined): Promise<SVGSVGElement> {
  const byId = new Map<string, WireStateNode>();
  const parentOf = new Map<string, string>();
  const index = (node: WireStateNode, parent?: string): void => {
    byId.set(node.id, node);
    if (parent) parentOf.set(node.id, parent);
    for (const child of node.states) index(child, node.id);
  };
  index(definition.root);
  const isAncestor = (a: string, b: string): boolean => {
    for (let p = parentOf.get(b); p; p = parentOf.get(p)) if (p === a) return true;
    return false;
  };

  const edges = new Map<string, EdgeInfo>();
  const anyNeeded = new Set<string>();
  const addEdge = (source: string, target: string, label: string, key: string, kind: WireTransition['kind']): void => {
    const id = `${source}=>${target}`;
    let edge = edges.get(id);
    if (!edge) {
      edge = { source, target, labels: [], keys: [], kinds: new Set() };
      edges.set(id, edge);
    }
    if (!edge.labels.includes(label)) edge.labels.push(label);
    if (!edge.keys.includes(key)) edge.keys.push(key);
    edge.kinds.add(kind);
  };
  for (const node of byId.values()) {
    if (node.initial) addEdge(`${node.id}::initial`, node.initial, '', `${node.id}::initial`, 'always');
    const keys = coverage ? wireTransitionKeys(node) : [];
    node.transitions.forEach((t, i) => {
      const taken = coverage ? ` ${coverage.transitions.get(keys[i]!) ?? 0}×` : '';
      for (const target of t.targets) {
        let source = node.id;
        let to = target;
        if (isAncestor(node.id, target)) {
          source = `${node.id}::any`;
          anyNeeded.add(node.id);
        }
        if (target === node.id || isAncestor(target, node.id)) to = byId.get(target)?.initial ? `${target}::initial` : target;
        addEdge(source, to, transitionLabel(t) + taken, `${node.id}->${target}`, t.kind);
      }
    });
  }
  const lines = (node: WireStateNode): string[] => (coverage ? [...sublines(node), ...coverageLines(node, coverage)] : sublines(node));

  const toElk = (node: WireStateNode): ElkNode => {
    const subs = lines(node);
    if (node.states.length === 0) {
      const width = Math.max(84, node.key.length * CHAR + 22, ...subs.map((s) => s.length * SUB_CHAR + 18));
      return { id: node.id, width, height: 28 + subs.length * 14 };
    }
    const children: ElkNode[] = [];
    if (node.initial) children.push({ id: `${node.id}::initial`, width: 12, height: 12 });
    if (anyNeeded.has(node.id)) children.push({ id: `${node.id}::any`, width: 74, height: 22 });
    for (const child of node.states) children.push(toElk(child));
    const top = 28 + subs.length * 14;
    return {
      id: node.id,
      layoutOptions: { 'elk.padding': `[top=${top},left=14,bottom=14,right=14]` },
      children,
    };
  };

  const graph: ElkNode = {
    id: '__root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'DOWN',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.json.edgeCoords': 'ROOT',
      'elk.json.shapeCoords': 'ROOT',
      'elk.layered.spacing.nodeNodeBetweenLayers': '34',
      'elk.spacing.nodeNode': '22',
      'elk.spacing.edgeLabel': '3',
      'elk.layered.nodePlacement.strategy': 'NETWORK_SIMPLEX',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.padding': '[top=8,left=8,bottom=8,right=8]',
    },
    children: [toElk(definition.root)],
    edges: [...edges.values()].map((edge, i): ElkExtendedEdge => {
      const text = edge.labels.filter(Boolean).join(' · ');
      const labels: ElkLabel[] = text ? [{ id: `l${i}`, text, width: text.length * LABEL_CHAR + 6, height: 15 }] : [];
      return { id: `e${i}`, sources: [edge.source], targets: [edge.target], labels };
    }),
  };

  const laid = await elk.layout(graph);
  return render(laid, byId, [...edges.values()], lines);
}

/** A state's coverage lines: how often it was entered, and how many of its transitions without a target (no edge) were taken. */
function coverageLines(node: WireStateNode, coverage: CoverageOnChart): string[] {
  const visits = coverage.states.get(node.id) ?? 0;
  const lines = [visits > 0 ? `visited ${visits}×` : 'never visited'];
  const inPlace = coverage.targetless.get(node.id);
  if (inPlace) lines.push(`in place: ${inPlace.filter((t) => t.count > 0).length} of ${inPlace.length} taken`);
  return lines;
}

function sublines(node: WireStateNode): string[] {
  const lines: string[] = [];
  for (const inv of node.invoke) lines.push(`invoke ${inv.src}`);
  if (node.entry.length) lines.push(`entry ${node.entry.join(', ')}`);
  const tags = node.tags.filter((t) => !t.startsWith('collapsed:'));
  if (tags.length) lines.push(`tags ${tags.join(', ')}`);
  const collapsed = node.tags.find((t) => t.startsWith('collapsed:'));
  if (collapsed) lines.push(`▸ ${collapsed.slice(10)} states inside (collapsed)`);
  return lines;
}

function transitionLabel(t: WireTransition): string {
  let event = t.event;
  if (t.kind === 'always') event = '';
  else if (t.kind === 'done') event = `done: ${event.replace(/^xstate\.done\.(actor|state)\./, '')}`;
  else if (t.kind === 'error') event = `error: ${event.replace(/^xstate\.error\.actor\./, '')}`;
  else if (t.kind === 'after') event = `after ${event.replace(/^xstate\.after\./, '')}`;
  const guard = t.guard ? `[${t.guard}]` : '';
  return [event, guard].filter(Boolean).join(' ') || 'always';
}

function render(laid: ElkNode, byId: Map<string, WireStateNode>, edges: EdgeInfo[], lines: (node: WireStateNode) => string[]): SVGSVGElement {
  const width = Math.ceil(laid.width ?? 400);
  const height = Math.ceil(laid.height ?? 300);
  const root = svg('svg', { class: 'statechart', viewBox: `0 0 ${width} ${height}`, width, height, role: 'img', 'aria-label': 'run statechart' });
  const defs = svg('defs');
  const marker = svg('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
  marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }));
  defs.append(marker);
  root.append(defs);

  const compounds = svg('g', { class: 'layer-compound' });
  const edgeLayer = svg('g', { class: 'layer-edges' });
  const atoms = svg('g', { class: 'layer-atomic' });
  root.append(compounds, edgeLayer, atoms);

  const visit = (node: ElkNode): void => {
    for (const child of node.children ?? []) {
      drawNode(child, child.children?.length ? compounds : atoms, byId, lines);
      visit(child);
    }
  };
  visit(laid);

  const laidEdges = (laid.edges ?? []) as ElkExtendedEdge[];
  laidEdges.forEach((edge, i) => {
    const info = edges[i]!;
    const g = svg('g', { class: `transition ${[...info.kinds].join(' ')}${info.source.endsWith('::initial') ? ' initial-edge' : ''}`, 'data-edge-keys': info.keys.join(' ') });
    for (const section of edge.sections ?? []) {
      const points = [section.startPoint, ...(section.bendPoints ?? []), section.endPoint];
      g.append(svg('path', { d: points.map((p, j) => `${j ? 'L' : 'M'} ${p.x.toFixed(1)} ${p.y.toFixed(1)}`).join(' '), 'marker-end': 'url(#arrow)' }));
    }
    for (const label of edge.labels ?? []) {
      const text = svg('text', { x: (label.x ?? 0) + 3, y: (label.y ?? 0) + 11, class: 'edge-label' });
      text.textContent = label.text ?? '';
      g.append(text);
    }
    const title = svg('title');
    title.textContent = info.keys.filter((k) => !k.endsWith('::initial')).join('\n') || 'initial state';
    g.append(title);
    edgeLayer.append(g);
  });
  return root;
}

function drawNode(node: ElkNode, layer: SVGGElement, byId: Map<string, WireStateNode>, lines: (node: WireStateNode) => string[]): void {
  const x = node.x ?? 0;
  const y = node.y ?? 0;
  const w = node.width ?? 0;
  const h = node.height ?? 0;
  if (node.id.endsWith('::initial')) {
    layer.append(svg('circle', { class: 'initial-dot', cx: x + w / 2, cy: y + h / 2, r: 5 }));
    return;
  }
  if (node.id.endsWith('::any')) {
    const g = svg('g', { class: 'any-state' });
    g.append(svg('rect', { x, y, width: w, height: h, rx: 11 }));
    const t = svg('text', { x: x + w / 2, y: y + 15, 'text-anchor': 'middle' });
    t.textContent = 'any state';
    g.append(t);
    layer.append(g);
    return;
  }
  const state = byId.get(node.id);
  if (!state) return;
  const g = svg('g', { class: `state ${state.type}`, 'data-state-id': state.id });
  g.append(svg('rect', { x, y, width: w, height: h, rx: state.states.length ? 10 : 7 }));
  if (state.type === 'final') g.append(svg('rect', { class: 'final-inner', x: x + 3, y: y + 3, width: w - 6, height: h - 6, rx: 5 }));
  const compound = state.states.length > 0;
  const label = svg('text', { x: compound ? x + 10 : x + w / 2, y: y + 18, class: 'state-label', 'text-anchor': compound ? 'start' : 'middle' });
  label.textContent = state.key;
  g.append(label);
  // Lines past the state's own sub-lines are coverage lines.
  const own = sublines(state).length;
  lines(state).forEach((line, i) => {
    const sub = svg('text', { x: compound ? x + 10 : x + w / 2, y: y + 32 + i * 14, class: i < own ? 'state-sub' : 'state-sub coverage-line', 'text-anchor': compound ? 'start' : 'middle' });
    sub.textContent = line;
    g.append(sub);
  });
  const title = svg('title');
  title.textContent = state.id;
  g.append(title);
  g.setAttribute('tabindex', '0');
  g.addEventListener('click', (event) => {
    event.stopPropagation();
    const visits = g.dataset.visits === undefined ? {} : { visits: Number(g.dataset.visits) };
    showDetails('state', `state ${state.id}`, { id: state.id, type: state.type, active: g.classList.contains('active'), ...visits, tags: state.tags, entry: state.entry, exit: state.exit, invoke: state.invoke, transitions: state.transitions });
  });
  layer.append(g);
}

/** Marks active states (and the deepest ones) and the transitions of the last microstep. */
export function highlight(chart: SVGSVGElement, active: readonly string[], transitions: readonly string[], finished: boolean): void {
  const set = new Set(active);
  const leaves = new Set(active.filter((id) => !active.some((other) => other !== id && other.startsWith(`${id}.`))));
  for (const el of chart.querySelectorAll<SVGGElement>('[data-state-id]')) {
    const id = el.dataset.stateId!;
    el.classList.toggle('active', set.has(id));
    el.classList.toggle('leaf', leaves.has(id));
    el.classList.toggle('finished', finished && leaves.has(id));
  }
  const taken = new Set(transitions);
  for (const el of chart.querySelectorAll<SVGGElement>('[data-edge-keys]')) {
    el.classList.toggle('taken', (el.dataset.edgeKeys ?? '').split(' ').some((key) => taken.has(key)));
  }
}

/**
 * Marks coverage on a chart drawn with it: states and edges get `visited` (with `data-visits`)
 * or `unvisited`; an edge whose transitions were only partly taken also gets `partly`, and its
 * tooltip lists each transition with its count. Initial-state dots are left unmarked.
 */
export function markCoverage(chart: SVGSVGElement, coverage: CoverageOnChart): void {
  for (const el of chart.querySelectorAll<SVGGElement>('[data-state-id]')) {
    const visits = coverage.states.get(el.dataset.stateId!) ?? 0;
    el.dataset.visits = String(visits);
    el.classList.toggle('visited', visits > 0);
    el.classList.toggle('unvisited', visits === 0);
  }
  for (const el of chart.querySelectorAll<SVGGElement>('[data-edge-keys]')) {
    const transitions = (el.dataset.edgeKeys ?? '').split(' ').flatMap((key) => coverage.edges.get(key)?.transitions ?? []);
    if (transitions.length === 0) continue;
    const visits = transitions.reduce((n, t) => n + t.count, 0);
    el.dataset.visits = String(visits);
    el.classList.toggle('visited', visits > 0);
    el.classList.toggle('unvisited', visits === 0);
    el.classList.toggle('partly', visits > 0 && transitions.some((t) => t.count === 0));
    const title = el.querySelector('title');
    if (title) title.textContent = transitions.map((t) => `${t.key}: ${t.count}×`).join('\n');
  }
}
