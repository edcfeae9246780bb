import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Agent, Runner } from '../src/index.js';
import { ScriptedModel, call, text } from '../src/entry/testing.js';
import { agentToolName, handoffToolName, slugify } from '../src/handoff/slug.js';

const sha8 = (name: string): string => createHash('sha256').update(name, 'utf8').digest('hex').slice(0, 8);

describe('handoff tool names', () => {
  it('lower-cases ASCII and replaces everything else with _', () => {
    expect(slugify('Billing Agent')).toBe('billing_agent');
    expect(slugify('Café-Ops 2')).toBe(`caf_ops_2_${sha8('Café-Ops 2')}`);
    expect(slugify('')).toBe('agent');
    expect(handoffToolName('Refunds')).toBe('transfer_to_refunds');
    expect(agentToolName('Research')).toBe('ask_research');
  });

  it('cuts to 64 characters with a stable hash suffix', () => {
    const long = 'A very long specialist agent name that goes on and on and on forever';
    const name = handoffToolName(long);
    expect(name).toHaveLength(64);
    expect(name).toMatch(/^transfer_to_a_very_long_specialist_agent_name_that_goes_[0-9a-f]{8}$/);
    expect(handoffToolName(long)).toBe(name);
    expect(handoffToolName(long + '!')).not.toBe(name);
  });

  it('a name in another script gets agent_<first 8 hex of its sha256>: distinct, and the same in another process', () => {
    const support = 'Служба поддержки';
    const billing = '账单';
    expect([handoffToolName(support), handoffToolName(billing)]).toEqual([`transfer_to_agent_${sha8(support)}`, `transfer_to_agent_${sha8(billing)}`]);
    expect(agentToolName(support)).toBe(`ask_agent_${sha8(support)}`);
    expect(handoffToolName('Agent 日本')).toBe(`transfer_to_agent_${sha8('Agent 日本')}`);
    expect(handoffToolName('Agent 中国')).not.toBe(handoffToolName('Agent 日本'));
    const script = `import { handoffToolName } from './src/handoff/slug.ts'; process.stdout.write(handoffToolName(${JSON.stringify(support)}));`;
    expect(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })).toBe(handoffToolName(support));
  });

  it('two agents named only in non-Latin scripts are both handoff targets of one agent, and a transfer reaches the right one', async () => {
    // Same length, no ASCII: both were `transfer_to___` before.
    const support = new Agent({ name: '客服', model: new ScriptedModel([text('您好')]) });
    const billing = new Agent({ name: '账单', model: new ScriptedModel([text('你好')]) });
    const front = new Agent({ name: 'front', model: new ScriptedModel([call(handoffToolName('账单'), {}, 'h1')]), handoffs: [support, billing] });
    expect([...front.toolTable().keys()]).toEqual([`transfer_to_agent_${sha8('客服')}`, `transfer_to_agent_${sha8('账单')}`]);
    const result = await Runner.run(front, 'hi');
    expect([result.output, result.agent]).toEqual(['你好', '账单']);
  });
});
