import { describe, expect, it } from 'vitest';
import { Agent, Runner, UserError } from '../../src/index.js';
import { ScriptedModel, batch, text } from '../../src/entry/testing.js';
import { checkJsonSchema, rawTool } from '../../src/tools/raw-tool.js';
import { collect, completed } from '../helpers.js';

const issues = (value: unknown, schema: Record<string, unknown>) => checkJsonSchema(value, schema).map((i) => `${i.path}: ${i.message}`);

describe('checkJsonSchema', () => {
  it('checks types, including integer and type arrays', () => {
    expect(issues('x', { type: 'string' })).toEqual([]);
    expect(issues(1.5, { type: 'integer' })).toEqual(['(root): expected integer, received number']);
    expect(issues(null, { type: ['string', 'null'] })).toEqual([]);
    expect(issues([], { type: 'object' })).toEqual(['(root): expected object, received array']);
    expect(issues(Number.NaN, { type: 'number' })).toEqual(['(root): expected number, received number']);
    expect(issues({ a: 'x' }, {})).toEqual([]);
  });

  it('checks properties, required and additionalProperties with paths', () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' }, maxItems: 2 } },
      required: ['name'],
      additionalProperties: false,
    };
    expect(issues({ name: 'a', tags: ['x'] }, schema)).toEqual([]);
    expect(issues({ tags: ['x', 3, 'z'], extra: 1 }, schema)).toEqual([
      'name: required property is missing',
      'tags: expected at most 2 items',
      'tags.1: expected string, received integer',
      'extra: unexpected property',
    ]);
    expect(issues({ a: 1, b: 'x' }, { type: 'object', additionalProperties: { type: 'number' } })).toEqual(['b: expected number, received string']);
  });

  it('checks enum, const, string and number bounds and patterns', () => {
    expect(issues('c', { enum: ['a', 'b'] })).toEqual(['(root): expected one of "a", "b"']);
    expect(issues({ k: [1] }, { enum: [{ k: [1] }] })).toEqual([]);
    expect(issues('x', { const: 'y' })).toEqual(['(root): expected "y"']);
    expect(issues('ab', { type: 'string', minLength: 3, pattern: '^b' })).toEqual(['(root): expected at least 3 characters', '(root): expected to match /^b/']);
    expect(issues('😀😀', { type: 'string', maxLength: 2 })).toEqual([]);
    expect(issues(0, { type: 'number', minimum: 1, exclusiveMaximum: 0 })).toEqual(['(root): expected >= 1', '(root): expected < 0']);
    expect(issues(5, { maximum: 4, exclusiveMinimum: 5 })).toEqual(['(root): expected <= 4', '(root): expected > 5']);
    expect(issues([], { type: 'array', minItems: 1 })).toEqual(['(root): expected at least 1 items']);
  });

  it('checks anyOf/oneOf/allOf and local $refs; ignores what it does not know', () => {
    expect(issues(3, { anyOf: [{ type: 'string' }, { type: 'integer' }] })).toEqual([]);
    expect(issues(true, { oneOf: [{ type: 'string' }, { type: 'integer' }] })).toEqual(['(root): does not match any of the allowed schemas']);
    expect(issues(3, { allOf: [{ type: 'integer' }, { minimum: 4 }] })).toEqual(['(root): expected >= 4']);
    const withRefs = { type: 'object', properties: { p: { $ref: '#/$defs/point' } }, $defs: { point: { type: 'object', required: ['x'] } } };
    expect(issues({ p: {} }, withRefs)).toEqual(['p.x: required property is missing']);
    expect(issues({ p: 1 }, { properties: { p: { $ref: '#/definitions/n' } }, definitions: { n: { type: 'string' } } })).toEqual(['p: expected string, received integer']);
    expect(issues('not-an-email', { type: 'string', format: 'email', if: { const: 1 } })).toEqual([]);
    expect(issues('x', { type: 'string', pattern: '(?<' })).toEqual([]);
  });
});

describe('rawTool', () => {
  const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] };

  it('shows the JSON Schema to the model as given and validates (with coercion) before execute', async () => {
    const got: unknown[] = [];
    const double = rawTool({
      name: 'double',
      description: 'Double a number.',
      parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', ...schema },
      execute: (args) => {
        got.push(args);
        return (args.n as number) * 2;
      },
    });
    expect(double.jsonSchema).toEqual(schema);
    expect(double).toMatchObject({ strict: false, parallel: true, source: 'agent tools', needsApproval: false });
    const model = new ScriptedModel([
      batch([
        ['double', { n: 4 }, 'ok'],
        ['double', { n: '5' }, 'coerced'],
        ['double', { n: 0 }, 'low'],
        ['double', {}, 'missing'],
      ]),
      text('done'),
    ]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: [double] }), 'go'));
    expect(Object.fromEntries(completed(events).map((e) => [e.call.id, e.output]))).toEqual({
      ok: '8',
      coerced: '10',
      low: "Tool error: Invalid arguments for tool 'double': n: expected >= 1",
      missing: "Tool error: Invalid arguments for tool 'double': n: required property is missing",
    });
    expect(got).toEqual([{ n: 4 }, { n: 5 }]);
    expect(model.requests[0]!.tools).toEqual([{ name: 'double', description: 'Double a number.', parameters: schema, strict: false }]);
  });

  it("validate: 'none' passes any object through", async () => {
    const got: unknown[] = [];
    const t = rawTool({ name: 'loose', description: 'x', parameters: schema, validate: 'none', execute: (args) => void got.push(args) });
    await Runner.run(new Agent({ name: 'a', model: new ScriptedModel([batch([['loose', { n: 'nope' }, 'c']]), text('ok')]), tools: [t] }), 'go');
    expect(got).toEqual([{ n: 'nope' }]);
  });

  it('fills in type and properties; rejects non-object schemas and bad options', () => {
    expect(rawTool({ name: 't', description: 'd', parameters: {}, execute: () => 1 }).jsonSchema).toEqual({ type: 'object', properties: {} });
    expect(() => rawTool({ name: 't', description: 'd', parameters: { type: 'array' }, execute: () => 1 })).toThrow(
      new UserError(`Tool 't': parameters must be a JSON Schema of type 'object', got "array".`),
    );
    expect(() => rawTool({ name: 'bad name', description: 'd', parameters: {}, execute: () => 1 })).toThrow(UserError);
    expect(() => rawTool({ name: 't', description: 'd', parameters: {}, retries: -1, execute: () => 1 })).toThrow(
      "Tool option 'retries' must be a non-negative integer, got -1.",
    );
  });
});
