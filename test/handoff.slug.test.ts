import { describe, expect, it } from 'vitest';
import { agentToolName, handoffToolName, slugify } from '../src/handoff/slug.js';

describe('handoff tool names', () => {
  it('lower-cases ASCII and replaces everything else with _', () => {
    expect(slugify('Billing Agent')).toBe('billing_agent');
    expect(slugify('Café-Ops 2')).toBe('caf__ops_2');
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
});
