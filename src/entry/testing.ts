/**
 * `troupe/testing`: test doubles. A separate entry so that importing `troupe` never loads
 * them into production code.
 */
export { ScriptedModel, text, call, batch, type ScriptStep, type RecordedRequest } from '../models/scripted.js';
export { exploreAgent } from '../testing/explore.js';
export { INVARIANTS, type BuiltInInvariant } from '../testing/invariants.js';
export { ExplorationNondeterminism } from '../testing/path-driver.js';
export type { Choice, Exploration, ExploredPath, ExploreOptions, PathInvariant, PathOutcome, ToolOutcome, Violation } from '../testing/explore-types.js';
export { CoverageRecorder, coverageTable, type AgentCoverage, type ChartCoverage, type CoverageReport, type CoveredItem } from '../testing/coverage.js';
export { walkChart, transitionKey, type ChartShape, type ChartTransition } from '../testing/chart-shape.js';
export { describePaths, assertPath, PathFailure, type TestRunner } from '../testing/path-tests.js';
export { lintAgent, type LintFinding, type LintRule } from '../testing/lint-agent.js';
export { replayModel, ReplayModel, ReplayMismatch } from '../testing/replay-model.js';
export { forkRun, forkOrigin, type ForkOptions, type ForkOrigin, type ForkedResult } from '../testing/fork-run.js';
