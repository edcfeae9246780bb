import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, tool, type Tool } from '../../src/index.js';
import { ScriptedModel, lintAgent } from '../../src/entry/testing.js';
import { demoAgent } from '../../src/cli/demo.js';

const model = new ScriptedModel([]);
const plain = (name: string, extra: Partial<Parameters<typeof tool>[0]> = {}): Tool => tool({ name, description: 'd', parameters: z.object({}), execute: () => 'x', ...extra });

describe('lintAgent', () => {
  it('finds nothing in a clean system', () => {
    const helper = new Agent({ name: 'Helper', model, tools: [plain('search')] });
    expect(lintAgent(new Agent({ name: 'Main', model, tools: [helper.asTool({ maxTurns: 3 }), plain('note')], handoffs: [new Agent({ name: 'Other', model })] }))).toEqual([]);
  });

  it('flags the demo: its gated booking tool has no handler to decide it when nobody reads the stream', () => {
    expect(lintAgent(demoAgent())).toEqual([
      {
        rule: 'approval-without-decider',
        severity: 'warning',
        agent: 'Travel specialist',
        tool: 'book_hotel',
        message: "Tool 'book_hotel' of agent 'Travel specialist' needs approval and the agent has no approvalHandler: a run nobody reads (Runner.run) denies every call of it. Give the agent an approvalHandler, or decide from the stream (approval_required, handle.approvals).",
      },
    ]);
    // With a handler, nothing is left.
    const decided = new Agent({ name: 'Desk', model, tools: [plain('refund', { needsApproval: true })], approvalHandler: () => 'ask' });
    expect(lintAgent(decided)).toEqual([]);
  });

  it('finds each problem of a broken system, in every reachable agent, with a message that says what to change', () => {
    const billing = new Agent({
      name: 'Billing',
      model,
      tools: [plain('charge', { parallel: false }), plain('tags', { description: ' ', strict: true, parameters: z.object({ tags: z.record(z.string(), z.string()) }) })],
    });
    const helper = new Agent({ name: 'Helper', model });
    const triage = new Agent({ name: 'Triage', model, tools: [plain('transfer_to_billing'), helper.asTool(), { ...plain('raw'), jsonSchema: { type: 'string' } }], handoffs: [billing] });
    billing.handoffs.push(triage);
    expect(lintAgent(triage).map((f) => `${f.severity} ${f.rule} ${f.agent}${f.tool ? `/${f.tool}` : ''}: ${f.message}`)).toEqual([
      "error duplicate-tool-name Triage/transfer_to_billing: Agent 'Triage' has two tools named 'transfer_to_billing' (from agent tools and handoffs); tools and handoffs share one namespace, so its runs fail at run_started. Rename one (tool({ name }), handoff(agent, { name }) or asTool({ name })).",
      "warning agent-tool-unbounded Triage/ask_helper: Agent tool 'ask_helper' of agent 'Triage' has no turn limit or budget of its own: each call may take 10 turns and spend what the caller has left. Set asTool({ maxTurns }) or asTool({ budget }).",
      'error schema-not-object Triage/raw: Tool \'raw\' of agent \'Triage\' has parameters of type "string": providers take only an object schema. Wrap the value in an object (z.object({ value: … })).',
      "warning barrier-with-handoffs Billing/charge: Tool 'charge' of agent 'Billing' is parallel: false and the agent hands off: a batch with both runs one call at a time and the handoff waits for it. Keep the tool parallel, or move it to the agent it hands off to.",
      "warning tool-without-description Billing/tags: Tool 'tags' of agent 'Billing' has no description: the model sees only its name.",
      "error strict-schema-open-object Billing/tags: Tool 'tags' of agent 'Billing' is strict, and its schema has an object open to more properties at tags (a record or passthrough object): strict mode refuses it. Give the object fixed properties, or make the tool non-strict.",
      "warning handoff-cycle Triage: Handoffs loop: Triage → Billing → Triage. Only the run's maxTurns (default 10) ends a conversation that bounces between them; give the agents a rule for when not to hand back, and a run maxTurns you accept.",
    ]);
  });

  it('flags a sequential agent that hands off', () => {
    const agent = new Agent({ name: 'Seq', model, toolExecution: 'sequential', handoffs: [new Agent({ name: 'B', model })] });
    expect(lintAgent(agent).map((f) => f.message)).toEqual(["Agent 'Seq' runs every batch sequentially (toolExecution: 'sequential') and hands off: a handoff waits for every call before it in the batch."]);
  });
});
