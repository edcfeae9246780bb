import type { AgentGraph, AgentNode } from '../../src/inspect/wire.js';
import { clickable } from './details.js';
import { svg } from './dom.js';

const NODE_W = 190;
const LINE_H = 15;
const GAP_X = 40;
const GAP_Y = 56;
const CHAR_W = 6.6;

/**
 * The agents of a run as a graph: one box per agent (its plain tools listed inside), handoff
 * edges solid, agent-as-tool edges dashed, each labelled with the tool the model calls. Agents
 * in `active` (the ones running now) are highlighted. Layered top-down from the root.
 */
export function renderTopology(graph: AgentGraph, active: ReadonlySet<string>): SVGSVGElement {
  const depth = new Map<string, number>([[graph.root, 0]]);
  const queue = [graph.root];
  while (queue.length > 0) {
    const name = queue.shift()!;
    for (const edge of graph.edges) {
      if (edge.from === name && !depth.has(edge.to)) {
        depth.set(edge.to, depth.get(name)! + 1);
        queue.push(edge.to);
      }
    }
  }
  const nodes = new Map<string, AgentNode>(graph.agents.map((a) => [a.name, a]));
  // Edge targets that are not agents of the graph (a handoff to a name only) still get a box.
  for (const edge of graph.edges) if (!nodes.has(edge.to)) nodes.set(edge.to, { name: edge.to, instructions: undefined, tools: [] });
  for (const name of nodes.keys()) if (!depth.has(name)) depth.set(name, 1);
  const rows: string[][] = [];
  for (const [name, d] of depth) (rows[d] ??= []).push(name);
  const heightOf = (node: AgentNode): number => 30 + Math.max(1, node.tools.length) * LINE_H;
  const widthOf = (node: AgentNode): number => Math.max(NODE_W, node.name.length * 7.6 + 24, ...node.tools.map((t) => t.length * CHAR_W + 30));
  const rowHeights = rows.map((row) => Math.max(...(row ?? []).map((n) => heightOf(nodes.get(n)!))));
  const rowWidths = rows.map((row) => (row ?? []).reduce((w, n) => w + widthOf(nodes.get(n)!) + GAP_X, -GAP_X));
  // Room on the right for edge labels and edges that loop back up.
  const longestLabel = Math.max(0, ...graph.edges.map((e) => e.tool.length));
  const nodesWidth = Math.max(...rowWidths);
  // Edge labels start at the middle of the node area and may reach past it on the right.
  const width = 40 + nodesWidth + Math.max(0, longestLabel * CHAR_W + 16 - nodesWidth / 2);
  const pos = new Map<string, { x: number; y: number; w: number; h: number }>();
  let y = 16;
  rows.forEach((row, d) => {
    let x = 20 + (nodesWidth - rowWidths[d]!) / 2;
    for (const name of row ?? []) {
      const node = nodes.get(name)!;
      pos.set(name, { x, y, w: widthOf(node), h: heightOf(node) });
      x += widthOf(node) + GAP_X;
    }
    y += rowHeights[d]! + GAP_Y;
  });
  const height = y - GAP_Y + 16;
  const root = svg('svg', { class: 'topology', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': 'agent topology' });
  const defs = svg('defs');
  const marker = svg('marker', { id: 'topo-arrow', viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto-start-reverse' });
  marker.append(svg('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: 'arrowhead' }));
  defs.append(marker);
  root.append(defs);
  for (const edge of graph.edges) {
    const a = pos.get(edge.from);
    const b = pos.get(edge.to);
    if (!a || !b) continue;
    const x1 = a.x + a.w / 2;
    const y1 = a.y + a.h;
    const x2 = b.x + b.w / 2;
    const y2 = b.y;
    const down = y2 > y1;
    const d = down ? `M ${x1} ${y1} C ${x1} ${y1 + 24}, ${x2} ${y2 - 24}, ${x2} ${y2}` : `M ${a.x + a.w} ${a.y + a.h / 2} C ${a.x + a.w + 60} ${a.y}, ${b.x + b.w + 60} ${b.y + b.h}, ${b.x + b.w} ${b.y + b.h / 2}`;
    const g = svg('g', { class: `topo-edge ${edge.kind}`, 'data-from': edge.from, 'data-to': edge.to, 'data-kind': edge.kind });
    g.append(svg('path', { d, 'marker-end': 'url(#topo-arrow)' }));
    // Two lines (what kind of edge, then the tool) keep the label narrow.
    const lx = (x1 + x2) / 2 + 6;
    const ly = down ? (y1 + y2) / 2 - 2 : (a.y + b.y) / 2;
    for (const [i, line] of [edge.kind === 'handoff' ? 'handoff' : 'agent as tool', edge.tool].entries()) {
      const label = svg('text', { x: lx, y: ly + i * 13, class: `topo-edge-label${i === 1 ? ' tool-name' : ''}` });
      label.textContent = line;
      g.append(label);
    }
    root.append(g);
  }
  for (const [name, p] of pos) {
    const node = nodes.get(name)!;
    const g = svg('g', { class: `topo-node${active.has(name) ? ' active' : ''}${name === graph.root ? ' root' : ''}`, 'data-agent': name });
    g.append(svg('rect', { x: p.x, y: p.y, width: p.w, height: p.h, rx: 8 }));
    const title = svg('text', { x: p.x + 10, y: p.y + 18, class: 'topo-name' });
    title.textContent = name;
    g.append(title);
    const tools = node.tools.length > 0 ? node.tools : ['(no tools)'];
    tools.forEach((tool, i) => {
      const t = svg('text', { x: p.x + 14, y: p.y + 34 + i * LINE_H, class: `topo-tool${node.tools.length === 0 ? ' none' : ''}` });
      t.textContent = node.tools.length > 0 ? `ƒ ${tool}` : tool;
      g.append(t);
    });
    clickable(g, 'agent', `agent ${name}`, () => ({ ...node, handoffs: graph.edges.filter((e) => e.from === name && e.kind === 'handoff').map((e) => e.to), agentTools: graph.edges.filter((e) => e.from === name && e.kind === 'tool').map((e) => ({ tool: e.tool, agent: e.to })), active: active.has(name) }));
    root.append(g);
  }
  return root;
}
