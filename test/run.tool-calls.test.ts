import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, BudgetExceeded, InvalidToolArguments, RunCancelled, Runner, ToolError, ToolTimeout, tool, toolResult, type RunEvent, type ToolPolicy } from '../src/index.js';
import { ScriptedModel, call, text } from '../src/entry/testing.js';
import { collect, completed, trace } from './helpers.js';

async function runOne(t: ReturnType<typeof tool>, args: unknown = {}, agentOptions: Partial<ConstructorParameters<typeof Agent>[0]> = {}) {
  const model = new ScriptedModel([call(t.name, args, 'c1'), text('done')]);
  const handle = Runner.stream(new Agent({ name: 'a', model, tools: [t], ...agentOptions }), 'q');
  const events = await collect(handle);
  return { events, model, handle, done: completed(events)[0]! };
}

const failed = (events: RunEvent[]) =>
  events.filter((e): e is Extract<RunEvent, { type: 'tool_call_failed' }> => e.type === 'tool_call_failed').map((e) => [e.attempt, e.willRetry, e.error.message]);

describe('errors and retries', () => {
  it('turns a throwing tool into a "Tool error: …" result and the run continues', async () => {
    const boom = tool({ name: 'boom', description: 'd', parameters: z.object({}), execute: () => { throw new Error('disk full'); } });
    const { done, events, handle } = await runOne(boom);
    expect(done).toMatchObject({ isError: true, output: 'Tool error: disk full', result: undefined });
    expect(failed(events)).toEqual([[1, false, 'disk full']]);
    expect((await handle.result()).output).toBe('done');
  });

  it('appends the ToolError hint', async () => {
    const t = tool({ name: 'lim', description: 'd', parameters: z.object({}), execute: () => { throw new ToolError('rate limited', { hint: 'wait 60 s' }); } });
    expect((await runOne(t)).done.output).toBe('Tool error: rate limited\n  hint: wait 60 s');
  });

  it('retries 1 + retries attempts with a fresh shallow copy of the args each time', async () => {
    const seen: unknown[] = [];
    let attempts = 0;
    const flaky = tool({
      name: 'flaky',
      description: 'd',
      parameters: z.object({ key: z.string() }),
      retries: 2,
      policies: [async (invoke, args, ctx) => { seen.push(args); (args as Record<string, unknown>).touched = true; return invoke(args, ctx); }],
      execute: ({ key }) => {
        attempts++;
        if (attempts < 3) throw new Error(`try ${attempts}`);
        return `got ${key}`;
      },
    });
    const { done, events } = await runOne(flaky, { key: 'k' });
    expect(done).toMatchObject({ isError: false, output: 'got k' });
    expect(failed(events)).toEqual([[1, true, 'try 1'], [2, true, 'try 2']]);
    // Each attempt saw the untouched model arguments, not the previous attempt's mutation.
    expect(seen).toEqual([{ key: 'k', touched: true }, { key: 'k', touched: true }, { key: 'k', touched: true }]);
    expect(seen[0]).not.toBe(seen[1]);
  });

  it('inherits the agent defaultToolRetries and gives up after the last attempt', async () => {
    let attempts = 0;
    const t = tool({ name: 't', description: 'd', parameters: z.object({}), execute: () => { attempts++; throw new Error('nope'); } });
    const { done, events } = await runOne(t, {}, { defaultToolRetries: 1 });
    expect(attempts).toBe(2);
    expect(failed(events)).toEqual([[1, true, 'nope'], [2, false, 'nope']]);
    expect(done.output).toBe('Tool error: nope');
  });

  it('never retries InvalidToolArguments, BudgetExceeded or RunCancelled', async () => {
    let invalid = 0;
    const t1 = tool({ name: 't1', description: 'd', parameters: z.object({}), retries: 3, execute: () => { invalid++; throw new InvalidToolArguments('bad shape'); } });
    expect((await runOne(t1)).done.output).toBe('Tool error: bad shape');
    expect(invalid).toBe(1);

    let budget = 0;
    const t2 = tool({ name: 't2', description: 'd', parameters: z.object({}), retries: 3, execute: () => { budget++; throw new BudgetExceeded('toolCalls', 5, 4); } });
    const r2 = await runOne(t2);
    expect(budget).toBe(1);
    expect(r2.done.output).toBe('Tool error: tool call count 5 exceeds budget 4');
    // A budget error raised by the run's own tools stops the run at the next safe point.
    expect(trace(r2.events).slice(-2)).toEqual(['tool_call_completed:c1', 'run_failed']);
    await expect(r2.handle.result()).rejects.toBeInstanceOf(BudgetExceeded);

    let cancelled = 0;
    const t3 = tool({ name: 't3', description: 'd', parameters: z.object({}), retries: 3, execute: () => { cancelled++; throw new RunCancelled('tool gave up'); } });
    const r3 = await runOne(t3);
    expect(cancelled).toBe(1);
    await expect(r3.handle.result()).rejects.toThrow('Run cancelled: tool gave up');
  });

  it('times out each attempt after timeoutMs, aborting the attempt signal', async () => {
    let aborted = 0;
    const hang = tool({
      name: 'hang',
      description: 'd',
      parameters: z.object({}),
      timeoutMs: 20,
      retries: 1,
      execute: (_a, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener('abort', () => {
            aborted++;
            resolve('late');
          });
        }),
    });
    const { done, events } = await runOne(hang);
    expect(done).toMatchObject({ isError: true, output: "Tool error: tool 'hang' timed out after 20 ms" });
    expect(failed(events)).toEqual([[1, true, "tool 'hang' timed out after 20 ms"], [2, false, "tool 'hang' timed out after 20 ms"]]);
    expect((events.find((e) => e.type === 'tool_call_failed') as { error: Error }).error).toBeInstanceOf(ToolTimeout);
    expect(aborted).toBe(2);
  });

  it('returns explicit error results without rendering and passes details to observers only', async () => {
    const t = tool({
      name: 't',
      description: 'd',
      parameters: z.object({}),
      resultRenderer: () => 'RENDERED',
      execute: () => toolResult({ content: { code: 429 }, isError: true, details: { retryAfter: 60 } }),
    });
    const { done, model } = await runOne(t);
    expect(done).toMatchObject({ isError: true, output: '{"code":429}', details: { retryAfter: 60 } });
    expect(JSON.stringify(model.requests[1]!.messages)).not.toContain('retryAfter');
  });
});

describe('policies', () => {
  it('chains policies first-outermost on raw args; they may modify args, short-circuit and transform results', async () => {
    const order: string[] = [];
    const cache = new Map<string, unknown>([['cached', 'from cache']]);
    const outer: ToolPolicy = async (invoke, args, ctx) => {
      order.push(`outer sees ${JSON.stringify(args)}`);
      const result = await invoke({ ...(args as object), q: String((args as { q: string }).q).trim() }, ctx);
      return `[${String(result)}]`;
    };
    const caching: ToolPolicy = async (invoke, args, ctx) => {
      order.push(`cache sees ${JSON.stringify(args)}`);
      const key = (args as { q: string }).q;
      if (cache.has(key)) return cache.get(key);
      return invoke(args, ctx);
    };
    const search = tool({ name: 'search', description: 'd', parameters: z.object({ q: z.string(), n: z.number().default(1) }), policies: [outer, caching], execute: ({ q, n }) => `${q}×${n}` });
    const model = new ScriptedModel([call('search', { q: '  cached ' }, 'c1'), call('search', { q: ' fresh', n: '2' }, 'c2'), text('done')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: [search] }), 'q'));
    expect(completed(events).map((e) => e.output)).toEqual(['[from cache]', '[fresh×2]']);
    expect(order).toEqual([
      'outer sees {"q":"  cached "}',
      'cache sees {"q":"cached"}',
      'outer sees {"q":" fresh","n":"2"}',
      'cache sees {"q":"fresh","n":"2"}',
    ]);
  });

  it('validates at the innermost link, so a policy passing bad args yields InvalidToolArguments', async () => {
    const breaker: ToolPolicy = (invoke, _args, ctx) => invoke({ q: 42 }, ctx);
    const t = tool({ name: 't', description: 'd', parameters: z.object({ q: z.string() }), policies: [breaker], retries: 2, execute: ({ q }) => q });
    const { done, events } = await runOne(t, { q: 'ok' });
    expect(done.output).toBe("Tool error: Invalid arguments for tool 't': q: Invalid input: expected string, received number");
    expect(failed(events)).toHaveLength(1);
  });
});

describe('rendering and truncation', () => {
  it('uses the tool renderer, else the agent renderer, else JSON; the raw value reaches observers', async () => {
    const rows = tool({ name: 'rows', description: 'd', parameters: z.object({}), resultRenderer: (r) => `${(r as unknown[]).length} rows`, execute: () => [{ id: 1 }, { id: 2 }] });
    const plain = tool({ name: 'plain', description: 'd', parameters: z.object({}), execute: () => ({ id: 3 }) });
    const model = new ScriptedModel([call('rows', {}, 'r'), call('plain', {}, 'p'), text('done')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: [rows, plain] }), 'q'));
    expect(completed(events).map((e) => [e.output, e.result])).toEqual([['2 rows', [{ id: 1 }, { id: 2 }]], ['{"id":3}', { id: 3 }]]);

    const model2 = new ScriptedModel([call('plain', {}, 'p'), text('done')]);
    const events2 = await collect(Runner.stream(new Agent({ name: 'a', model: model2, tools: [plain], toolResultRenderer: (r) => `agent:${JSON.stringify(r)}` }), 'q'));
    expect(completed(events2)[0]!.output).toBe('agent:{"id":3}');
  });

  it('reports a throwing renderer without re-running the tool, and errors bypass renderers', async () => {
    let runs = 0;
    const t = tool({ name: 't', description: 'd', parameters: z.object({}), retries: 2, resultRenderer: () => { throw new Error('bad template'); }, execute: () => ++runs });
    const { done } = await runOne(t);
    expect(done).toMatchObject({ isError: true, output: 'Tool error: result rendering failed: bad template' });
    expect(runs).toBe(1);

    const boom = tool({ name: 'boom', description: 'd', parameters: z.object({}), resultRenderer: () => 'never', execute: () => { throw new Error('x'); } });
    expect((await runOne(boom)).done.output).toBe('Tool error: x');
  });

  it('truncates to the tool limit, else the agent limit, dropping the raw value', async () => {
    const big = tool({ name: 'big', description: 'd', parameters: z.object({}), maxOutputChars: 10, execute: () => 'x'.repeat(1500) });
    const { done } = await runOne(big);
    expect(done.output).toBe('xxxxxxxx\n\n[... tool output truncated: kept 10 of 1,500 chars ...]\n\nxx');
    expect(done.result).toBeUndefined();

    const agentLimited = tool({ name: 'al', description: 'd', parameters: z.object({}), execute: () => 'y'.repeat(30) });
    expect((await runOne(agentLimited, {}, { maxToolOutputChars: 20 })).done.output).toBe('yyyyyyyyyyyyyyyy\n\n[... tool output truncated: kept 20 of 30 chars ...]\n\nyyyy');
    const off = tool({ name: 'off', description: 'd', parameters: z.object({}), maxOutputChars: null, execute: () => 'z'.repeat(30) });
    expect((await runOne(off, {}, { maxToolOutputChars: 20 })).done.output).toBe('z'.repeat(30));
  });
});
