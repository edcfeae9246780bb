import { describe, it } from 'vitest';
import { z } from 'zod';
import { Agent, tool } from 'troupe';
import { ScriptedModel, describePaths, exploreAgent } from 'troupe/testing';

const model = new ScriptedModel([]);
const lookupOrder = tool({ name: 'lookup_order', description: 'Find an order.', parameters: z.object({ order: z.string() }), execute: async ({ order }) => ({ order, cents: 4200 }) });
const refund = tool({ name: 'refund', description: 'Refund an order.', parameters: z.object({ order: z.string(), cents: z.number().int().min(1) }), needsApproval: true, execute: async ({ order }) => `Refunded ${order}.` });
const refunds = new Agent({ name: 'Refunds', instructions: 'Look the order up, then refund it.', model, tools: [lookupOrder, refund] });
const desk = new Agent({ name: 'Desk', instructions: 'Send refund requests to Refunds.', model, handoffs: [refunds] });

// One test per path ("#3 completed: Desk reply 1: call transfer_to_refunds › …"), after one
// that fails when maxPaths cut the exploration short or some path broke an invariant.
describePaths('support desk', await exploreAgent(desk, { maxCallsPerRun: 3 }), { describe, it });
