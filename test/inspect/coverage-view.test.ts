import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, Runner, tool } from '../../src/index.js';
import { CoverageRecorder, ScriptedModel, call, text, walkChart } from '../../src/entry/testing.js';
import { coverageOnChart, coverageSummary, wireTransitionKeys } from '../../src/inspect/coverage-view.js';
import { walkMachine } from '../../src/inspect/definition.js';
import type { WireStateNode } from '../../src/inspect/wire.js';
import { getRunMachine } from '../../src/runtime/run-machine.js';
import { checkCoverageReport } from '../../src/server/coverage-route.js';

const root = walkMachine(getRunMachine());
const allNodes = (node: WireStateNode): WireStateNode[] => [node, ...node.states.flatMap(allNodes)];

/** One real run: a lookup call, then a text reply. */
async function oneRun(): Promise<CoverageRecorder> {
  const lookup = tool({ name: 'lookup', description: 'Look up.', parameters: z.object({ q: z.string() }), execute: async () => 'found' });
  const agent = new Agent({ name: 'Desk', model: new ScriptedModel([call('lookup', { q: 'a' }), text('done')]), tools: [lookup] });
  const recorder = new CoverageRecorder(agent);
  const handle = Runner.stream(agent, 'hi', { inspect: recorder.inspect });
  await recorder.watch(handle);
  return recorder;
}

describe('coverage on the inspector chart: the data mapping', () => {
  it("rebuilds, from the wire definition, exactly the chart's transition keys, in the same order", () => {
    expect(allNodes(root).flatMap(wireTransitionKeys)).toEqual(walkChart(getRunMachine()).transitions.map((t) => t.key));
  });

  it('maps a real run onto states, transitions, drawn edges and targetless transitions', async () => {
    const report = (await oneRun()).report();
    const view = coverageOnChart(root, report);
    expect([...view.states].filter(([, n]) => n > 0)).toEqual([
      ['run', 1],
      ['run.idle', 1],
      ['run.starting', 1],
      ['run.turn', 1],
      ['run.turn.checkLimits', 2],
      ['run.turn.model', 2],
      ['run.turn.executing', 1],
      ['run.turn.executing.preflight', 1],
      ['run.turn.executing.draining', 1],
      ['run.turn.turnEnd', 2],
      ['run.finishing', 1],
      ['run.completed', 1],
    ]);
    // The same numbers as the report's own.
    expect(view.summary).toEqual({ runs: 1, states: 33, statesVisited: report.chart.statesCovered, transitions: 85, transitionsTaken: report.chart.transitionsCovered });
    expect([view.summary.statesVisited, view.summary.transitionsTaken]).toEqual([12, 10]);
    // An edge drawn for two transitions (noToolCalls taken once, replyStops never).
    expect(view.edges.get('run.turn.model->run.turn.turnEnd')).toEqual({
      count: 1,
      transitions: [
        { key: 'run.turn.model model.replied#2 [replyStops] -> run.turn.turnEnd', count: 0 },
        { key: 'run.turn.model model.replied#3 [noToolCalls] -> run.turn.turnEnd', count: 1 },
      ],
    });
    expect(view.edges.get('run.turn.model->run.turn.executing')).toEqual({ count: 1, transitions: [{ key: 'run.turn.model model.replied#5 -> run.turn.executing', count: 1 }] });
    expect(view.edges.get('run->run.cancelled')).toEqual({
      count: 0,
      transitions: [
        { key: 'run CANCEL#0 -> run.cancelled', count: 0 },
        { key: 'run tools.settled#0 [resultsCancelRun] -> run.cancelled', count: 0 },
      ],
    });
    // Transitions without a target are no edge: they stay with their state.
    expect(view.targetless.get('run')!.map((t) => `${t.key} ${t.count}`)).toEqual([
      'run tools.settled#1 -> (self) 0',
      'run child.spend#0 -> (self) 0',
      'run ancestor.spend#0 -> (self) 0',
      'run child.started#0 -> (self) 0',
      'run child.ended#0 -> (self) 0',
      'run mailbox.post#0 -> (self) 0',
      'run handoff.request#0 -> (self) 0',
      'run steer.add#0 -> (self) 0',
      'run steer.remove#0 -> (self) 0',
      'run guardrail.passed#0 -> (self) 0',
      'run SUSPEND#0 -> (self) 0',
    ]);
    expect([...view.targetless.keys()]).toEqual(['run', 'run.idle', 'run.restoring']);
    // Every transition is an edge's or a state's, once.
    const onEdges = new Set([...view.edges.values()].flatMap((e) => e.transitions.map((t) => t.key)));
    const inPlace = [...view.targetless.values()].flat().map((t) => t.key);
    expect(onEdges.size + inPlace.length).toBe(85);
    expect(view.unmatched).toEqual({ states: [], transitions: [] });
    expect(coverageSummary(view)).toBe('coverage of 1 run: 12 of 33 states visited, 10 of 85 transitions taken');
  });

  it('names what a report from another chart has that this one does not, and counts the rest', async () => {
    const report = (await oneRun()).report();
    const other = { runs: 3, chart: { states: [...report.chart.states, { id: 'run.gone', count: 2 }], transitions: [{ id: 'run.gone always#0 -> run.completed', count: 2 }, { id: 'run CANCEL#0 -> run.cancelled', count: 3 }] } };
    const view = coverageOnChart(root, other);
    expect(view.unmatched).toEqual({ states: ['run.gone'], transitions: ['run.gone always#0 -> run.completed'] });
    expect(view.edges.get('run->run.cancelled')!.count).toBe(3);
    expect(coverageSummary(view)).toBe(
      'coverage of 3 runs: 12 of 33 states visited, 1 of 85 transitions taken (the report names 1 state and 1 transition this chart does not have: it was made with another version of troupe)',
    );
  });

  it('checks a coverage file field by field, with a message naming the file and the field', async () => {
    const report = JSON.parse(JSON.stringify((await oneRun()).report()));
    expect(checkCoverageReport(report, 'c.json')).toBe(report);
    const tail = '. Write one with JSON.stringify(exploration.coverage) or JSON.stringify(recorder.report()).';
    expect(() => checkCoverageReport([], 'c.json')).toThrow(`c.json is not a coverage report: it is not a JSON object${tail}`);
    expect(() => checkCoverageReport({ ...report, runs: -1 }, 'c.json')).toThrow(`c.json is not a coverage report: "runs" must be a non-negative integer${tail}`);
    expect(() => checkCoverageReport({ ...report, chart: null }, 'c.json')).toThrow(`c.json is not a coverage report: "chart" must be an object${tail}`);
    expect(() => checkCoverageReport({ ...report, chart: { ...report.chart, transitions: 'x' } }, 'c.json')).toThrow(`c.json is not a coverage report: "chart.transitions" must be an array${tail}`);
    const states = [...report.chart.states];
    states[3] = { id: 'run.turn', count: 1.5 };
    expect(() => checkCoverageReport({ ...report, chart: { ...report.chart, states } }, 'c.json')).toThrow(`c.json is not a coverage report: "chart.states[3]" must be { id: string, count: non-negative integer }${tail}`);
    expect(() => checkCoverageReport({ ...report, chart: { ...report.chart, statesCovered: '12' } }, 'c.json')).toThrow(`c.json is not a coverage report: "chart.statesCovered" and "chart.transitionsCovered" must be non-negative integers${tail}`);
    expect(() => checkCoverageReport({ ...report, agents: {} }, 'c.json')).toThrow(`c.json is not a coverage report: "agents" must be an array${tail}`);
  });
});
