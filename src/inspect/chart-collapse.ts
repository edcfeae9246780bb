/**
 * "Collapse inactive regions" for the statechart view: every compound state with no active
 * state inside is drawn as one box. Transitions of the hidden states are lifted to that box
 * (deduplicated) and transitions into them point at it, so no edge is lost. Dependency-free.
 */
import type { WireStateNode, WireTransition } from './wire.js';

/** The definition with inactive compound states emptied; `active` holds ids (ancestors included). */
export function collapseInactive(root: WireStateNode, active: ReadonlySet<string>): WireStateNode {
  const visible = new Map<string, string>();
  const mark = (node: WireStateNode, collapsedInto: string | undefined): void => {
    visible.set(node.id, collapsedInto ?? node.id);
    const collapse = collapsedInto === undefined && node.states.length > 0 && node.id !== root.id && !active.has(node.id);
    for (const child of node.states) mark(child, collapsedInto ?? (collapse ? node.id : undefined));
  };
  mark(root, undefined);
  const retarget = (t: WireTransition): WireTransition => ({ ...t, targets: [...new Set(t.targets.map((id) => visible.get(id) ?? id))] });
  const lifted = (node: WireStateNode): WireTransition[] => node.states.flatMap((child) => [...child.transitions, ...lifted(child)]);
  const build = (node: WireStateNode): WireStateNode => {
    const collapsed = node.states.length > 0 && node.id !== root.id && !active.has(node.id);
    if (!collapsed) return { ...node, transitions: node.transitions.map(retarget), states: node.states.map(build) };
    const seen = new Set<string>();
    const transitions: WireTransition[] = [];
    for (const t of [...node.transitions, ...lifted(node)].map(retarget)) {
      // Transitions inside the collapsed region point at the box itself: drop them.
      const targets = t.targets.filter((id) => id !== node.id);
      if (t.targets.length > 0 && targets.length === 0) continue;
      const key = `${t.event}|${t.kind}|${targets.join(',')}|${t.guard ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      transitions.push({ ...t, targets });
    }
    const { initial: _initial, ...rest } = node;
    return { ...rest, type: 'atomic', transitions, states: [], tags: [...node.tags, `collapsed:${countStates(node) - 1}`] };
  };
  return build(root);
}

function countStates(node: WireStateNode): number {
  return 1 + node.states.reduce((n, child) => n + countStates(child), 0);
}
