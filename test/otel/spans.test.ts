import { ROOT_CONTEXT, context, trace, type Context, type ContextManager } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent } from '../../src/agent.js';
import { ModelError } from '../../src/errors.js';
import type { Model } from '../../src/models/model.js';
import { ScriptedModel, batch, call, text } from '../../src/models/scripted.js';
import { Runner } from '../../src/runtime/runner.js';
import { tool } from '../../src/tools/tool.js';
import { collect, deferred } from '../helpers.js';
import { isError, renamed, testTrace, times } from './otel-harness.js';

const usage = (inputTokens: number, outputTokens: number) => ({ usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens } });

describe('OpenTelemetry spans: run, model calls, tools', () => {
  it('traces two parallel tools (one retried) under invoke_agent, with chat spans carrying gen_ai attributes', async () => {
    const t = testTrace();
    const slowDone = deferred<string>();
    let flakyRuns = 0;
    const slow = tool({ name: 'slow', description: 'd', parameters: z.object({}), execute: () => slowDone.promise });
    const flaky = tool({
      name: 'flaky',
      description: 'd',
      parameters: z.object({}),
      retries: 1,
      execute: () => {
        if (++flakyRuns === 1) throw new TypeError('socket hang up');
        slowDone.resolve('slow ok');
        return 'flaky ok';
      },
    });
    const model = renamed(new ScriptedModel([batch([['slow', {}, 's1'], ['flaky', {}, 'f1']], usage(11, 7)), text('all done', usage(20, 3))]), 'openai.chat:gpt-4o-mini');
    const agent = new Agent({ name: 'Worker', model, tools: [slow, flaky] });
    const result = await Runner.run(agent, 'go', { tracer: t.tracer, runId: 'r1' });
    expect(result.output).toBe('all done');

    expect(t.spans().map((s) => s.name).sort()).toEqual(['chat gpt-4o-mini', 'chat gpt-4o-mini', 'execute_tool flaky', 'execute_tool slow', 'invoke_agent Worker']);
    const run = t.one('invoke_agent Worker');
    expect(t.parentOf(run)).toBeUndefined();
    expect(t.childNames(run)).toEqual(['chat gpt-4o-mini', 'chat gpt-4o-mini', 'execute_tool flaky', 'execute_tool slow']);
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'Worker',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'troupe.run.id': 'r1',
      'troupe.run.turns': 2,
      'troupe.usage.input_tokens': 31,
      'troupe.usage.output_tokens': 10,
    });
    expect(isError(run)).toBe(false);

    const [first, second] = t.named('chat gpt-4o-mini').sort((a, b) => times(a).start - times(b).start);
    expect(first!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'openai',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': 11,
      'gen_ai.usage.output_tokens': 7,
      'gen_ai.response.finish_reasons': ['tool-calls'],
      'troupe.turn': 1,
    });
    expect(second!.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': 20, 'gen_ai.usage.output_tokens': 3, 'gen_ai.response.finish_reasons': ['stop'], 'troupe.turn': 2 });

    const slowSpan = t.one('execute_tool slow');
    const flakySpan = t.one('execute_tool flaky');
    expect(slowSpan.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'slow', 'gen_ai.tool.call.id': 's1', 'troupe.turn': 1 });
    expect(flakySpan.attributes).toMatchObject({ 'gen_ai.tool.name': 'flaky', 'gen_ai.tool.call.id': 'f1' });
    // They ran at the same time: each started before the other ended.
    expect(times(slowSpan).start).toBeLessThanOrEqual(times(flakySpan).end);
    expect(times(flakySpan).start).toBeLessThanOrEqual(times(slowSpan).end);
    // The retry is an event on the call's span; the call itself succeeded.
    expect(flakySpan.events.map((e) => e.name)).toEqual(['retry']);
    expect(flakySpan.events[0]!.attributes).toMatchObject({ 'troupe.tool.attempt': 1, 'error.type': 'TypeError', 'troupe.error.message': 'socket hang up' });
    expect(isError(flakySpan)).toBe(false);
    expect(slowSpan.events).toEqual([]);
    // The model call ended before the tools started, and the tools before the second model call.
    expect(times(first!).end).toBeLessThanOrEqual(times(slowSpan).start);
    expect(times(flakySpan).end).toBeLessThanOrEqual(times(second!).start);
  });

  it('marks a failing tool call with error status, error.type and the final attempt as an exception', async () => {
    const t = testTrace();
    const broken = tool({ name: 'broken', description: 'd', parameters: z.object({}), execute: () => { throw new RangeError('out of range'); } });
    const agent = new Agent({ name: 'A', model: new ScriptedModel([call('broken', {}, 'b1'), text('sorry')]), tools: [broken] });
    await Runner.run(agent, 'go', { tracer: t.tracer });
    const span = t.one('execute_tool broken');
    expect(isError(span)).toBe(true);
    expect(span.status.message).toBe('Tool error: out of range');
    expect(span.attributes['error.type']).toBe('RangeError');
    expect(span.events.map((e) => e.name)).toEqual(['exception']);
    expect(isError(t.one('invoke_agent A'))).toBe(false);
  });

  it('ends the run span with error status, the error class and message when the run fails', async () => {
    const t = testTrace();
    const failing: Model = {
      name: 'anthropic.messages:claude-sonnet-4',
      // eslint-disable-next-line require-yield
      async *stream() {
        throw new Error('overloaded');
      },
    };
    const agent = new Agent({ name: 'Fragile', model: failing });
    await expect(Runner.run(agent, 'go', { tracer: t.tracer })).rejects.toBeInstanceOf(ModelError);
    const run = t.one('invoke_agent Fragile');
    expect(isError(run)).toBe(true);
    expect(run.status.message).toMatch(/overloaded/);
    expect(run.attributes['error.type']).toBe('ModelError');
    expect(run.events.map((e) => e.name)).toEqual(['exception']);
    const chat = t.one('chat claude-sonnet-4');
    expect(chat.attributes['gen_ai.provider.name']).toBe('anthropic');
    expect(isError(chat)).toBe(true);
    expect(chat.attributes['error.type']).toBe('ModelError');
    expect(t.parentOf(chat)).toBe(run);
  });

  it('ends the run span with RunCancelled when the run is cancelled mid-tool, closing the open tool span', async () => {
    const t = testTrace();
    const hang = tool({ name: 'hang', description: 'd', parameters: z.object({}), execute: (_a, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))) });
    const agent = new Agent({ name: 'C', model: new ScriptedModel([call('hang', {}, 'h1'), text('never')]), tools: [hang] });
    const handle = Runner.stream(agent, 'go', { tracer: t.tracer });
    await collect(handle, (e) => {
      if (e.type === 'tool_call_started') handle.cancel('user left');
    });
    const run = t.one('invoke_agent C');
    expect(run.attributes['error.type']).toBe('RunCancelled');
    expect(run.status.message).toBe('Run cancelled: user left');
    expect(isError(t.one('execute_tool hang'))).toBe(true);
    expect(t.spans()).toHaveLength(3);
  });

  it('parents the root run span under the context active when the run starts', async () => {
    const t = testTrace();
    let active: Context = ROOT_CONTEXT;
    const manager: ContextManager = {
      active: () => active,
      with: (ctx, fn, thisArg, ...args) => {
        const before = active;
        active = ctx;
        try {
          return fn.call(thisArg, ...args);
        } finally {
          active = before;
        }
      },
      bind: (_ctx, target) => target,
      enable() {
        return this;
      },
      disable() {
        return this;
      },
    };
    context.setGlobalContextManager(manager);
    try {
      const outer = t.tracer.startSpan('request');
      const agent = new Agent({ name: 'Inner', model: new ScriptedModel([text('hi')]) });
      const handle = context.with(trace.setSpan(ROOT_CONTEXT, outer), () => Runner.stream(agent, 'go', { tracer: t.tracer }));
      await handle.result();
      outer.end();
      expect(t.parentOf(t.one('invoke_agent Inner'))).toBe(t.one('request'));
    } finally {
      context.disable();
    }
  });

  it('still calls the caller\'s own inspect observer', async () => {
    const t = testTrace();
    const seen: string[] = [];
    const agent = new Agent({ name: 'I', model: new ScriptedModel([text('hi')]) });
    await Runner.run(agent, 'go', { tracer: t.tracer, inspect: (e) => seen.push(e.type) });
    expect(seen).toContain('@xstate.snapshot');
    expect(t.named('invoke_agent I')).toHaveLength(1);
  });

  it('never lets a broken tracer change the run', async () => {
    const broken = { startSpan: () => { throw new Error('exporter down'); }, startActiveSpan: () => { throw new Error('exporter down'); } } as unknown as import('@opentelemetry/api').Tracer;
    const echo = tool({ name: 'echo', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => 'e' });
    const agent = new Agent({ name: 'B', model: new ScriptedModel([call('echo', {}, 'e1'), text('fine')]), tools: [echo], approvalHandler: () => true });
    const result = await Runner.run(agent, 'go', { tracer: broken });
    expect(result.output).toBe('fine');
  });
});
