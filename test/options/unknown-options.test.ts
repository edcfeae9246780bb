/**
 * Unknown options are errors (issue 25, item 4): every options object a person writes by hand
 * rejects a key no option has with a UserError naming it and the closest valid one (edit
 * distance), as plain JavaScript would otherwise ignore a typo silently.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, MemoryCheckpointStore, MemorySession, Runner, UserError, askHuman, handoff, rawTool, tool, workspaceTools, type RunEvent } from '../../src/index.js';
import { ScriptedModel, text } from '../../src/entry/testing.js';
import { SqliteCheckpointStore } from '../../src/entry/sqlite.js';
import { PostgresCheckpointStore } from '../../src/entry/postgres.js';
import { createServer, startWorker } from '../../src/entry/server.js';
import { aiSdkModel } from '../../src/entry/ai-sdk.js';
import { closestName, editDistance } from '../../src/option-keys.js';
import { collect, trace } from '../helpers.js';

const model = () => new ScriptedModel([text('hi')]);
const noop = (): string => 'ok';
const unknown = (owner: string, key: string, closest: string, expected: string) => new UserError(`Unknown ${owner} '${key}'; did you mean '${closest}'? Expected one of ${expected}.`);

const AGENT_OPTIONS = 'name, instructions, model, tools, handoffs, approvalHandler, defaultToolRetries, defaultToolTimeoutMs, maxToolOutputChars, toolResultRenderer, toolExecution, settings, hooks, contextPolicy, outputType, inputGuardrails, outputGuardrails, plugins';
const RUN_OPTIONS = 'maxTurns, budget, signal, context, runId, approvalTimeoutMs, instructions, extra, maxConcurrentToolCalls, steeringMode, checkpoint, session, inspect, tracer, contextPolicy, on';
const TOOL_OPTIONS = 'name, description, parameters, jsonSchema, execute, parallel, executionMode, needsApproval, retries, timeoutMs, maxOutputChars, resultRenderer, policies, strict, exposeToModel';

describe('closest option name', () => {
  it('is the candidate at the least edit distance (a swap of neighbours costs one), case-insensitive, the first on a tie', () => {
    expect([editDistance('maxturn', 'maxturns'), editDistance('ifRunExist', 'ifRunExists'), editDistance('tool', 'tools'), editDistance('ab', 'ba'), editDistance('', 'abc')]).toEqual([1, 1, 1, 1, 3]);
    expect(closestName('MAXTURN', ['maxConcurrentToolCalls', 'maxTurns'])).toBe('maxTurns');
    expect(closestName('temprature', ['maxTokens', 'temperature'])).toBe('temperature');
    expect(closestName('zz', ['ab', 'cd'])).toBe('ab');
    expect(closestName('sessionId', ['store', 'id'])).toBe('id');
  });
});

describe('options objects reject unknown keys', () => {
  it('Agent: a misspelt option, hook or model setting', () => {
    expect(() => new Agent({ name: 'a', model: model(), tool: [] } as never)).toThrow(unknown('Agent option', 'tool', 'tools', AGENT_OPTIONS));
    expect(() => new Agent({ name: 'a', model: model(), hooks: { beforeModelcall: noop } as never })).toThrow(
      unknown("Agent 'a' hook option", 'beforeModelcall', 'beforeModelCall', 'resolveToolCall, transformContext, convertToModel, beforeModelCall, afterModelResponse, beforeToolCall, afterToolCall, shouldStopAfterTurn, onRunEnd'),
    );
    expect(() => new Agent({ name: 'a', model: model(), settings: { temprature: 0 } as never })).toThrow(
      unknown("Agent 'a' settings field", 'temprature', 'temperature', 'temperature, maxTokens, parallelToolCalls, providerOptions'),
    );
    expect(() => new Agent(null as never)).toThrow(new UserError('Expected Agent options as an object, got null.'));
  });

  it('tool(), rawTool(), handoff(), agent.asTool(), askHuman(), workspaceTools()', () => {
    expect(() => tool({ name: 't', description: 'd', parameter: z.object({}), execute: noop } as never)).toThrow(unknown('tool option', 'parameter', 'parameters', TOOL_OPTIONS));
    expect(() => rawTool({ name: 't', description: 'd', parameters: { type: 'object' }, execute: noop, validation: 'none' } as never)).toThrow(
      unknown('rawTool option', 'validation', 'validate', 'name, description, parameters, execute, parallel, executionMode, needsApproval, retries, timeoutMs, maxOutputChars, resultRenderer, policies, validate, source, exposeToModel'),
    );
    const b = new Agent({ name: 'b', model: model() });
    expect(() => handoff(b, { onHandof: noop } as never)).toThrow(unknown('handoff option', 'onHandof', 'onHandoff', 'name, description, onHandoff, inputFilter'));
    expect(() => b.asTool({ maxTurn: 3 } as never)).toThrow(unknown('asTool option', 'maxTurn', 'maxTurns', 'name, description, maxTurns, budget'));
    expect(() => b.asTool({ budget: { maxToolCall: 1 } as never })).toThrow(unknown('budget field', 'maxToolCall', 'maxToolCalls', 'maxInputTokens, maxOutputTokens, maxTotalTokens, maxToolCalls, maxDurationMs'));
    expect(() => b.asTool({ maxTurns: 0 })).toThrow(new UserError('asTool: maxTurns must be a positive integer, got 0.'));
    expect(() => askHuman({ timeout: 5 } as never)).toThrow(unknown('askHuman option', 'timeout', 'timeoutMs', 'name, description, timeoutMs'));
    expect(() => workspaceTools({ root: '.', tool: ['read_file'] } as never)).toThrow(unknown('workspaceTools option', 'tool', 'tools', 'root, policy, tools, maxReadBytes, shell'));
  });

  it('run options, checkpoint, session: run_started then run_failed with the UserError, and no model request', async () => {
    const cases: Array<[Record<string, unknown>, UserError]> = [
      [{ maxTurn: 3 }, unknown('run option', 'maxTurn', 'maxTurns', RUN_OPTIONS)],
      [{ checkpoint: { store: new MemoryCheckpointStore(), ifRunExist: 'fail' } }, unknown('checkpoint option', 'ifRunExist', 'ifRunExists', 'store, runId, ifRunExists, owner, leaseMs, claimWaitMs, suspendOnWait')],
      [{ session: { store: new MemorySession(), sessionId: 's1' } }, unknown('session option', 'sessionId', 'id', 'store, id')],
      [{ contextPolicy: { offload: { minChar: 10 } } }, unknown('contextPolicy.offload field', 'minChar', 'minChars', 'minChars, previewChars')],
    ];
    for (const [options, error] of cases) {
      const m = model();
      const events = await collect(Runner.stream(new Agent({ name: 'a', model: m }), 'hi', options as never));
      expect(trace(events)).toEqual(['run_started', 'run_failed']);
      const failed = events[1] as Extract<RunEvent, { type: 'run_failed' }>;
      expect([failed.error, failed.error.message]).toEqual([error, error.message]);
      expect(m.requests).toHaveLength(0);
    }
    // Runner.resume's checkpoint options too.
    await expect(Runner.resume(new Agent({ name: 'a', model: model() }), { store: new MemoryCheckpointStore(), runId: 'r', claimWait: 5 } as never).result()).rejects.toThrow(
      unknown('checkpoint option', 'claimWait', 'claimWaitMs', 'store, runId, ifRunExists, owner, leaseMs, claimWaitMs, suspendOnWait'),
    );
  });

  it('stores, the server, a worker and the AI SDK adapter', async () => {
    expect(() => new MemoryCheckpointStore({ clock: Date.now } as never)).toThrow(unknown('MemoryCheckpointStore option', 'clock', 'now', 'now'));
    expect(() => new SqliteCheckpointStore(':memory:', { busyTimeout: 5 } as never)).toThrow(unknown('SQLite checkpoint store option', 'busyTimeout', 'busyTimeoutMs', 'synchronous, busyTimeoutMs, now'));
    expect(() => new PostgresCheckpointStore({ hots: 'db' } as never)).toThrow(
      unknown('PostgreSQL connection option', 'hots', 'host', 'connectionString, host, port, user, password, database, max, connectionTimeoutMillis, idleTimeoutMillis, ssl, applicationName'),
    );
    await expect(createServer({ agents: {}, tokn: 'x' } as never)).rejects.toThrow(/^Unknown server option 'tokn'; did you mean 'token'\? Expected one of agents, token, host, /);
    await expect(createServer({ agents: {}, runOptions: { maxTurn: 2 } } as never)).rejects.toThrow(
      unknown('server runOptions option', 'maxTurn', 'maxTurns', 'maxTurns, budget, context, instructions, extra, maxConcurrentToolCalls, steeringMode, session, tracer, contextPolicy, on'),
    );
    expect(() => startWorker({ store: {} as never, agents: {}, concurency: 2 } as never)).toThrow(/^Unknown worker option 'concurency'; did you mean 'concurrency'\? /);
    const languageModel = { specificationVersion: 'v3', provider: 'p', modelId: 'm', supportedUrls: {}, doGenerate: noop, doStream: noop };
    expect(() => aiSdkModel(languageModel as never, { maxRetry: 1 } as never)).toThrow(
      unknown('aiSdkModel option', 'maxRetry', 'maxRetries', 'name, maxRetries, initialRetryDelayMs, maxRetryDelayMs, maxRetryAfterMs, random, parallelToolCalls, providerOptions, headers, contentParts'),
    );
  });
});
