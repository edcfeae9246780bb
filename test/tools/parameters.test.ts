/**
 * Tool `parameters` of every kind a TypeScript user has (issue 25, item 5): Standard Schema
 * validators from zod 4, zod 3, valibot and arktype (the real libraries), plain JSON Schema
 * (checked by a JSON Schema validator), or none; anything else is a UserError saying what was
 * passed and what is accepted. Strict mode holds for each kind.
 */
import { type } from 'arktype';
import * as v from 'valibot';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod3';
import { Agent, InvalidToolArguments, Runner, UserError, tool, type ToolOptions } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';
import { validateArguments } from '../../src/tools/validate.js';

const noop = (): string => 'ok';
const AB = { type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['a'] };
const STRICT_AB = { type: 'object', properties: { a: { type: 'string' }, b: { type: ['number', 'null'] } }, required: ['a', 'b'], additionalProperties: false };

/** The same arguments, { a: string, b?: number }, in each kind, with the messages its validator gives. */
const kinds = {
  'zod 4': { options: { parameters: z.object({ a: z.string(), b: z.number().optional() }) }, wrongA: 'Invalid input: expected string, received number', missingA: 'Invalid input: expected string, received undefined' },
  'zod 3 (with jsonSchema)': { options: { parameters: z3.object({ a: z3.string(), b: z3.number().optional() }), jsonSchema: AB }, wrongA: 'Expected string, received number', missingA: 'Required' },
  valibot: { options: { parameters: v.object({ a: v.string(), b: v.optional(v.number()) }) }, wrongA: 'Invalid type: Expected string but received 1', missingA: 'Invalid key: Expected "a" but received undefined' },
  arktype: { options: { parameters: type({ a: 'string', 'b?': 'number' }) }, wrongA: 'a must be a string (was a number)', missingA: 'a must be a string (was missing)' },
  'JSON Schema': { options: { parameters: AB }, wrongA: 'Instance type "number" is invalid. Expected "string".', missingA: 'required property is missing' },
} as const satisfies Record<string, { options: Pick<ToolOptions, 'parameters' | 'jsonSchema'>; wrongA: string; missingA: string }>;

/** One kind's parameters as options any tool() call takes (the union of the kinds is not one schema type). */
const given = (options: object): Pick<ToolOptions, 'parameters' | 'jsonSchema'> => options;

describe.each(Object.entries(kinds))('parameters as %s', (_kind, { options, wrongA, missingA }) => {
  it('shows the model its JSON Schema, validates with its validator and coerces lax values', () => {
    const t = tool({ name: 't', description: 'd', execute: noop, ...given(options) });
    expect(t.jsonSchema).toEqual(AB);
    expect(validateArguments(t, { a: 'x', b: 2 })).toEqual({ a: 'x', b: 2 });
    expect(validateArguments(t, { a: 'x', b: '5' })).toEqual({ a: 'x', b: 5 });
    expect(() => validateArguments(t, { a: 1 })).toThrow(new InvalidToolArguments(`Invalid arguments for tool 't': a: ${wrongA}`, [{ path: 'a', message: wrongA }]));
    expect(() => validateArguments(t, { b: 2 })).toThrow(`Invalid arguments for tool 't': a: ${missingA}`);
  });

  it('strict: every property required, optional ones nullable, no other properties; a null reads back as absent', () => {
    const t = tool({ name: 't', description: 'd', execute: noop, strict: true, ...given(options) });
    expect([t.strict, t.jsonSchema, t.looseSchema]).toEqual([true, STRICT_AB, AB]);
    expect(validateArguments(t, { a: 'x', b: null })).toEqual({ a: 'x' });
    expect(() => validateArguments(t, { a: null, b: 1 })).toThrow(InvalidToolArguments);
  });
});

describe('tool parameters', () => {
  it('execute is typed by each validator: its output type, a JSON object for JSON Schema, nothing without parameters', async () => {
    const upper = [
      tool({ name: 'z4', description: 'd', parameters: z.object({ a: z.string() }), execute: ({ a }) => a.toUpperCase() }),
      tool({ name: 'z3', description: 'd', parameters: z3.object({ a: z3.string() }), jsonSchema: AB, execute: ({ a }) => a.toUpperCase() }),
      tool({ name: 'vb', description: 'd', parameters: v.object({ a: v.string() }), execute: ({ a }) => a.toUpperCase() }),
      tool({ name: 'ak', description: 'd', parameters: type({ a: 'string' }), execute: ({ a }) => a.toUpperCase() }),
      tool({ name: 'js', description: 'd', parameters: AB, execute: (args) => String(args.a).toUpperCase() }),
      tool({ name: 'no', description: 'd', execute: (args) => `${Object.keys(args).length}` }),
    ];
    expect(await Promise.all(upper.map((t) => t.execute(validateArguments(t, { a: 'x' }), undefined as never)))).toEqual(['X', 'X', 'X', 'X', 'X', '0']);
  });

  it('a run calls a tool of each kind with validated arguments; the model is sent each schema', async () => {
    const seen: unknown[] = [];
    const tools = Object.entries(kinds).map(([, { options }], i) => tool({ name: `t${i}`, description: 'd', execute: (args: unknown) => (seen.push(args), `done ${i}`), ...given(options) }));
    const model = new ScriptedModel([batch(tools.map((t, i) => [t.name, { a: `v${i}`, b: i }, `c${i}`] as const)), text('all done')]);
    const result = await Runner.run(new Agent({ name: 'a', model, tools }), 'go');
    expect(result.output).toBe('all done');
    expect(seen).toEqual(tools.map((_, i) => ({ a: `v${i}`, b: i })));
    expect(model.requests[0]!.tools.map((t) => t.parameters)).toEqual(tools.map(() => AB));
  });

  it('no parameters: a tool without arguments; the model sees an empty object schema and execute gets {}', async () => {
    let got: unknown;
    const now = tool({ name: 'now', description: 'The time.', execute: (args) => ((got = args), '12:00') });
    expect(now.jsonSchema).toEqual({ type: 'object', properties: {}, additionalProperties: false });
    expect(tool({ name: 'now', description: 'd', execute: noop, strict: true }).jsonSchema).toEqual({ type: 'object', properties: {}, required: [], additionalProperties: false });
    const model = new ScriptedModel([batch([['now', {}, 'c1']]), text('it is noon')]);
    const result = await Runner.run(new Agent({ name: 'a', model, tools: [now] }), 'time?');
    expect([result.output, got]).toEqual(['it is noon', {}]);
    expect(validateArguments(now, { stray: 1 })).toEqual({});
    expect(() => validateArguments(now, 'x')).toThrow("Invalid arguments for tool 'now': (root): expected an object, received string");
  });

  it('JSON Schema: $defs and $ref, drafts by $schema, nested paths in messages', () => {
    const t = tool({
      name: 'order',
      description: 'd',
      execute: noop,
      parameters: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        definitions: { item: { type: 'object', properties: { sku: { type: 'string', minLength: 2 } }, required: ['sku'] } },
        properties: { items: { type: 'array', items: { $ref: '#/definitions/item' } } },
        required: ['items'],
        additionalProperties: false,
      },
    });
    expect(t.jsonSchema).not.toHaveProperty('$schema');
    expect(validateArguments(t, { items: [{ sku: 'ab' }] })).toEqual({ items: [{ sku: 'ab' }] });
    expect(() => validateArguments(t, { items: [{ sku: 'a' }, {}], extra: 1 })).toThrow(
      "Invalid arguments for tool 'order': items.0.sku: String is too short (1 < 2).; items.1.sku: required property is missing; extra: unexpected property",
    );
  });

  it('a validator without a JSON Schema conversion needs jsonSchema: zod 3, or any other vendor', () => {
    expect(() => tool({ name: 'z3', description: 'd', execute: noop, parameters: z3.object({ a: z3.string() }) })).toThrow(
      new UserError("Tool 'z3': parameters is a zod 3 schema, which has no JSON Schema conversion built in; pass the JSON Schema the model should see as jsonSchema (e.g. from zod-to-json-schema), or use zod 4."),
    );
    const custom = { '~standard': { version: 1 as const, vendor: 'acme', validate: (value: unknown) => ({ value }) } };
    expect(() => tool({ name: 'c', description: 'd', execute: noop, parameters: custom })).toThrow(
      "Tool 'c': the acme validator has no JSON Schema conversion troupe knows; pass the JSON Schema the model should see as jsonSchema.",
    );
    expect(tool({ name: 'c', description: 'd', execute: noop, parameters: custom, jsonSchema: AB }).jsonSchema).toEqual(AB);
  });

  it('anything else is a UserError that says what was passed and what is accepted', () => {
    const accepted = 'parameters must be a Standard Schema validator (zod 4, zod 3.24 or later, valibot, arktype, …), a JSON Schema object of type "object", or left out for a tool without arguments';
    class Shape {
      readonly kind = 'shape';
    }
    const cases: Array<[unknown, string]> = [
      ['{"type":"object"}', 'string "{\\"type\\":\\"object\\"}"'],
      [[{ type: 'object' }], 'an array'],
      [new Shape(), 'an instance of Shape'],
      [() => ({}), 'a function'],
      [{ _def: { typeName: 'ZodObject' }, safeParse: () => ({}) }, 'a zod schema without Standard Schema support (zod before 3.24; upgrade zod)'],
      [{ type: 'object', check: () => true }, 'an object with functions in it'],
    ];
    for (const [parameters, got] of cases) {
      expect(() => tool({ name: 't', description: 'd', execute: noop, parameters: parameters as never })).toThrow(new UserError(`Tool 't': ${accepted}; got ${got}.`));
    }
    expect(() => tool({ name: 't', description: 'd', execute: noop, parameters: { type: 'array', items: {} } })).toThrow(
      'Tool \'t\': parameters must describe an object (JSON Schema type "object"), got type "array".',
    );
    expect(() => tool({ name: 't', description: 'd', execute: noop, parameters: AB, jsonSchema: AB })).toThrow("Tool 't': parameters is already a JSON Schema; leave out jsonSchema.");
    expect(() => tool({ name: 't', description: 'd', execute: noop, parameters: { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } } })).toThrow(/^Tool 't': parameters is not a usable JSON Schema: /);
  });

  it('an asynchronous validator is refused when it answers with a promise', () => {
    const slow = { '~standard': { version: 1 as const, vendor: 'acme', validate: async (value: unknown) => ({ value }) } };
    const t = tool({ name: 'slow', description: 'd', execute: noop, parameters: slow, jsonSchema: AB });
    expect(() => validateArguments(t, { a: 'x' })).toThrow(
      new UserError("Tool 'slow': its parameters validator answered asynchronously; tool arguments are validated synchronously, so use a schema without async checks."),
    );
  });
});
