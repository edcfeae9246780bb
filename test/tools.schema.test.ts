import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { UserError, tool } from '../src/index.js';

const noop = () => 'ok';

describe('tool() schema derivation', () => {
  it('derives the JSON Schema with descriptions from .describe(), defaults making fields optional', () => {
    const t = tool({
      name: 'search',
      description: 'Search the docs.',
      parameters: z.object({ query: z.string().describe('Search words'), limit: z.number().int().default(5) }),
      execute: noop,
    });
    expect(t.jsonSchema).toEqual({
      type: 'object',
      properties: {
        query: { type: 'string', description: 'Search words' },
        limit: { type: 'integer', default: 5, minimum: -9007199254740991, maximum: 9007199254740991 },
      },
      required: ['query'],
    });
    expect(t.strict).toBe(false);
  });

  it('strict mode closes objects, requires every property and makes optional ones nullable', () => {
    const t = tool({
      name: 'refund',
      description: 'Refund.',
      strict: true,
      parameters: z.object({
        orderId: z.string(),
        note: z.string().optional(),
        address: z.object({ city: z.string(), zip: z.string().optional() }),
      }),
      execute: noop,
    });
    expect(t.jsonSchema).toEqual({
      type: 'object',
      properties: {
        orderId: { type: 'string' },
        note: { type: ['string', 'null'] },
        address: {
          type: 'object',
          properties: { city: { type: 'string' }, zip: { type: ['string', 'null'] } },
          required: ['city', 'zip'],
          additionalProperties: false,
        },
      },
      required: ['orderId', 'note', 'address'],
      additionalProperties: false,
    });
  });

  it('never puts the run context in the schema', () => {
    const t = tool({ name: 'ctx_tool', description: 'd', parameters: z.object({ text: z.string() }), execute: (_args, ctx) => ctx.runId });
    expect(Object.keys(t.jsonSchema.properties as object)).toEqual(['text']);
  });

  it('rejects bad names and non-object parameters with a UserError', () => {
    expect(() => tool({ name: 'has space', description: 'd', parameters: z.object({}), execute: noop })).toThrow(
      new UserError("Invalid tool name 'has space': use 1-64 characters from a-z, A-Z, 0-9, '_' and '-'."),
    );
    expect(() => tool({ name: 'n', description: 'd', parameters: z.string() as never, execute: noop })).toThrow(
      'Tool \'n\': parameters must describe an object (JSON Schema type "object"), got type "string".',
    );
    expect(() => tool({ name: 'n', description: 'd', parameters: z.object({}), retries: -1, execute: noop })).toThrow(
      "Tool option 'retries' must be a non-negative integer, got -1.",
    );
  });
});
