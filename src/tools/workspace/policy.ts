import { UserError } from '../../errors.js';

export type WorkspaceToolName = 'read_file' | 'list_dir' | 'write_file' | 'edit_file' | 'shell';
export type PolicyDecision = 'allow' | 'ask' | 'deny';

export const WORKSPACE_TOOL_NAMES: readonly WorkspaceToolName[] = ['read_file', 'list_dir', 'write_file', 'edit_file', 'shell'];

/**
 * One rule. It applies when `tool` (one name, several, or any when absent) and `match`
 * (against the target, or everything when absent) both fit. The target is the path
 * relative to the workspace root, after `..` and symlinks are resolved, with '/'
 * separators ('.' for the root), or for `shell` the command line as the model sent it.
 */
export interface WorkspaceRule {
  tool?: WorkspaceToolName | readonly WorkspaceToolName[];
  match?: RegExp | ((target: string) => boolean);
  decision: PolicyDecision;
  /** Shown to the model when the rule denies. */
  reason?: string;
}

/**
 * First matching rule wins; otherwise `default`, which is one decision for every tool or
 * one per tool. Unset defaults: reads `allow`, writes and shell `ask`.
 */
export interface WorkspacePolicy {
  default?: PolicyDecision | Partial<Record<WorkspaceToolName, PolicyDecision>>;
  rules?: readonly WorkspaceRule[];
}

export const DEFAULT_DECISIONS: Readonly<Record<WorkspaceToolName, PolicyDecision>> = {
  read_file: 'allow',
  list_dir: 'allow',
  write_file: 'ask',
  edit_file: 'ask',
  shell: 'ask',
};

export interface Verdict {
  readonly decision: PolicyDecision;
  readonly reason: string | undefined;
}

const DECISIONS = new Set<PolicyDecision>(['allow', 'ask', 'deny']);

/** Checks a policy once, up front, so a typo cannot silently allow something. */
export function checkPolicy(policy: WorkspacePolicy | undefined): void {
  if (!policy) return;
  const bad = (what: string, value: unknown): never => {
    throw new UserError(`Workspace policy: ${what} must be 'allow', 'ask' or 'deny', got ${JSON.stringify(value)}.`);
  };
  if (typeof policy.default === 'string') {
    if (!DECISIONS.has(policy.default)) bad('default', policy.default);
  } else if (policy.default !== undefined) {
    for (const [tool, decision] of Object.entries(policy.default)) {
      if (!(WORKSPACE_TOOL_NAMES as readonly string[]).includes(tool)) throw new UserError(`Workspace policy: unknown tool '${tool}' in default.`);
      if (!DECISIONS.has(decision as PolicyDecision)) bad(`default.${tool}`, decision);
    }
  }
  (policy.rules ?? []).forEach((rule, i) => {
    if (!DECISIONS.has(rule.decision)) bad(`rules[${i}].decision`, rule.decision);
    for (const tool of rule.tool === undefined ? [] : typeof rule.tool === 'string' ? [rule.tool] : rule.tool) {
      if (!(WORKSPACE_TOOL_NAMES as readonly string[]).includes(tool)) throw new UserError(`Workspace policy: unknown tool '${tool}' in rules[${i}].`);
    }
  });
}

export function decide(policy: WorkspacePolicy | undefined, tool: WorkspaceToolName, target: string): Verdict {
  for (const rule of policy?.rules ?? []) {
    if (rule.tool !== undefined && (typeof rule.tool === 'string' ? rule.tool !== tool : !rule.tool.includes(tool))) continue;
    if (rule.match !== undefined && !matches(rule.match, target)) continue;
    return { decision: rule.decision, reason: rule.reason };
  }
  const fallback = policy?.default;
  const decision = typeof fallback === 'string' ? fallback : (fallback?.[tool] ?? DEFAULT_DECISIONS[tool]);
  return { decision, reason: undefined };
}

function matches(match: RegExp | ((target: string) => boolean), target: string): boolean {
  if (typeof match === 'function') return match(target) === true;
  match.lastIndex = 0; // global and sticky expressions keep state between calls
  return match.test(target);
}
