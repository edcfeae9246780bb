import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { Agent } from '../../src/agent.js';
import { ScriptedModel, batch, call, text } from '../../src/models/scripted.js';
import { otelApi } from '../../src/otel/otel-api.js';
import { traceRun } from '../../src/otel/trace-run.js';
import { Runner } from '../../src/runtime/runner.js';
import { tool } from '../../src/tools/tool.js';
import { collect } from '../helpers.js';
import { testTrace } from './otel-harness.js';

// Spies around the real functions: the tracer factory and the lazy `@opentelemetry/api` loader.
vi.mock('../../src/otel/trace-run.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/otel/trace-run.js')>();
  return { ...real, traceRun: vi.fn(real.traceRun) };
});
vi.mock('../../src/otel/otel-api.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/otel/otel-api.js')>();
  return { ...real, otelApi: vi.fn(real.otelApi) };
});

/** A run that goes through every traced path: parallel tools, an approval, a barrier, a sub-run, a handoff. */
function busyAgent(): Agent {
  const gated = tool({ name: 'gated', description: 'd', parameters: z.object({}), needsApproval: true, execute: () => 'g' });
  const alone = tool({ name: 'alone', description: 'd', parameters: z.object({}), parallel: false, execute: () => 'a' });
  const quick = tool({ name: 'quick', description: 'd', parameters: z.object({}), execute: () => 'q' });
  const helper = new Agent({ name: 'Helper', model: new ScriptedModel([text('helped')]) });
  const closer = new Agent({ name: 'Closer', model: new ScriptedModel([text('closed')]) });
  return new Agent({
    name: 'Busy',
    model: new ScriptedModel([
      batch([['quick', {}, 'q1'], ['gated', {}, 'g1'], ['alone', {}, 'a1'], ['ask_helper', { input: 'hi' }, 'h1']]),
      call('transfer_to_closer', {}, 't1'),
    ]),
    tools: [quick, gated, alone, helper.asTool()],
    handoffs: [closer],
  });
}

describe('tracing costs nothing without a tracer', () => {
  beforeEach(() => {
    vi.mocked(traceRun).mockClear();
    vi.mocked(otelApi).mockClear();
  });

  it('never calls the tracer factory nor loads @opentelemetry/api when no tracer is set', async () => {
    const handle = Runner.stream(busyAgent(), 'go');
    const events = await collect(handle, (e) => {
      if (e.type === 'approval_required') e.approve();
    });
    expect(events.at(-1)?.type).toBe('run_completed');
    expect(events.some((e) => e.type === 'handoff_occurred')).toBe(true);
    await Runner.run(busyAgent(), 'go', { inspect: () => undefined });
    expect(traceRun).not.toHaveBeenCalled();
    expect(otelApi).not.toHaveBeenCalled();
  });

  it('calls the factory once per run tree (sub-runs share it) when a tracer is set', async () => {
    const t = testTrace();
    const handle = Runner.stream(busyAgent(), 'go', { tracer: t.tracer });
    await collect(handle, (e) => {
      if (e.type === 'approval_required') e.approve();
    });
    expect(traceRun).toHaveBeenCalledTimes(1);
    expect(otelApi).toHaveBeenCalled();
    expect(t.named('invoke_agent Helper')).toHaveLength(1);
    expect(t.named('handoff Busy → Closer')).toHaveLength(1);
  });
});

describe('tracing loads nothing without a tracer', () => {
  it('an untraced run in a fresh process never loads @opentelemetry/api (checked in the module cache)', () => {
    const script = `
      import { createRequire } from 'node:module';
      const { Runner } = await import('./src/runtime/runner.ts');
      const { Agent } = await import('./src/agent.ts');
      const { ScriptedModel, text } = await import('./src/models/scripted.ts');
      await Runner.run(new Agent({ name: 'A', model: new ScriptedModel([text('hi')]) }), 'go');
      const require = createRequire(import.meta.url);
      console.log(JSON.stringify({ loaded: require.resolve('@opentelemetry/api') in require.cache }));
    `;
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: fileURLToPath(new URL('../..', import.meta.url)) });
    expect(JSON.parse(out.trim())).toEqual({ loaded: false });
  });
});
