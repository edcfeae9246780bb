import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Agent, askHuman, tool } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import { deferred } from '../helpers.js';
import { call as http, openSse } from './helpers.js';

let server: TroupeServer;
const gate = deferred<string>();

beforeAll(async () => {
  const wait = tool({ name: 'wait', description: 'd', parameters: z.object({}), execute: () => gate.promise });
  server = await createServer({
    inspect: 'off',
    agents: {
      waiter: () => new Agent({ name: 'waiter', model: new ScriptedModel([call('wait', {}, 'w'), text('done')]), tools: [wait] }),
      asker: () => new Agent({ name: 'asker', model: new ScriptedModel([call('ask_human', { question: 'Which city?', options: ['Rome', 'Paris'] }, 'h'), text('ok')]), tools: [askHuman()] }),
    },
  });
});
afterAll(() => server.close());

describe('POST /api/chat/steer', () => {
  it('queues a message the model sees at its next request; the stream shows user_message_injected', async () => {
    const chat = await openSse(server, 'POST', '/api/chat', { body: { agent: 'waiter', input: 'go' } });
    const runId = chat.res.headers['x-run-id'] as string;
    await chat.until((frames) => frames.some((f) => f.event === 'tool_call_started'));
    const steered = await http(server, 'POST', '/api/chat/steer', { body: { runId, text: 'hurry up' } });
    expect([steered.status, steered.json]).toEqual([202, { runId, id: 'steer_1', queue: 'steer' }]);
    gate.resolve('waited');
    await chat.all();
    const injected = chat.events().filter((e) => e.type === 'user_message_injected');
    expect(injected.map((e) => [e.source, (e.message as { content: string }).content, e.id])).toEqual([['steer', 'hurry up', 'steer_1']]);
  });

  it.each([
    [{ runId: 'nope', text: 'x' }, 404, 'run_not_found'],
    [{ runId: 'x' }, 400, 'missing_field'],
    [{ runId: 'x', text: '' }, 400, 'invalid_field'],
    [{ runId: 'x', text: 'y', queue: 'later' }, 400, 'invalid_field'],
  ])('rejects %j with %i %s', async (body, status, code) => {
    const res = await http(server, 'POST', '/api/chat/steer', { body });
    expect([res.status, res.json.error.code]).toEqual([status, code]);
  });
});

describe('POST /api/chat/answer', () => {
  it('answers a question askHuman asked through the run', async () => {
    const chat = await openSse(server, 'POST', '/api/chat', { body: { agent: 'asker', input: 'plan' } });
    const runId = chat.res.headers['x-run-id'] as string;
    await chat.until((frames) => frames.some((f) => f.event === 'human_request'));
    const request = chat.events().find((e) => e.type === 'human_request')!;
    expect([request.requestId, request.question, request.options]).toEqual([`${runId}:1.0`, 'Which city?', ['Rome', 'Paris']]);
    const wrong = await http(server, 'POST', '/api/chat/answer', { body: { runId, requestId: request.requestId, answer: 'Oslo' } });
    expect([wrong.status, wrong.json.error]).toEqual([400, { code: 'invalid_answer', message: "'Oslo' is not an option of 'Which city?'; options: Rome, Paris." }]);
    const missing = await http(server, 'POST', '/api/chat/answer', { body: { runId, requestId: 'nope', answer: 'Rome' } });
    expect([missing.status, missing.json.error.code]).toEqual([404, 'question_not_found']);
    const ok = await http(server, 'POST', '/api/chat/answer', { body: { runId, requestId: request.requestId, answer: 'Rome' } });
    expect([ok.status, ok.json]).toEqual([200, { runId, requestId: request.requestId, answer: 'Rome' }]);
    await chat.all();
    const completed = chat.events().filter((e) => e.type === 'tool_call_completed');
    expect(completed.map((e) => e.output)).toEqual(['Rome']);
    expect(chat.events().map((e) => e.type)).toContain('human_answer');
  });

  it('rejects an answer that is neither a string nor a list of strings', async () => {
    const res = await http(server, 'POST', '/api/chat/answer', { body: { runId: 'x', requestId: 'y', answer: 5 } });
    expect([res.status, res.json.error.code]).toEqual([400, 'invalid_field']);
  });
});
