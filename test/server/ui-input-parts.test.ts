import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../src/index.js';
import { ScriptedModel, text } from '../../src/entry/testing.js';
import { createServer, type TroupeServer } from '../../src/server/index.js';
import { FIXTURE_PDF, FIXTURE_PNG } from '../fixtures/mcp/fixture-server.mjs';
import { call } from './helpers.js';

const model = new ScriptedModel([text('A white pixel.')]);
let server: TroupeServer;

beforeAll(async () => {
  server = await createServer({ agents: { looker: () => new Agent({ name: 'looker', model }) } });
});
afterAll(async () => {
  await server.close();
});

const chat = (parts: unknown[]) => call(server, 'POST', '/api/chat?protocol=ui', { body: { messages: [{ id: 'u1', role: 'user', parts }] } });

describe('UI chat: file parts of the last user message (useChat attachments)', () => {
  it('data: URL files join the run input as image and file parts', async () => {
    const res = await chat([
      { type: 'text', text: 'What is in these?' },
      { type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${FIXTURE_PNG}`, filename: 'pixel.png' },
      { type: 'file', mediaType: 'application/pdf', url: `data:application/pdf;base64,${FIXTURE_PDF}`, filename: 'report.pdf' },
    ]);
    expect(res.status).toBe(200);
    expect(res.text).toContain('"type":"finish","finishReason":"stop"');
    expect(model.requests.at(-1)!.messages[0]).toEqual({
      role: 'user',
      content: 'What is in these?\n[image: image/png, 70 bytes]\n[file: report.pdf, application/pdf, 26 bytes]',
      parts: [
        { type: 'text', text: 'What is in these?' },
        { type: 'image', data: FIXTURE_PNG, mediaType: 'image/png' },
        { type: 'file', data: FIXTURE_PDF, mediaType: 'application/pdf', filename: 'report.pdf' },
      ],
    });
    expect(server.run(String(res.headers['x-run-id']))!.input).toBe('What is in these?');
  });

  it('an image alone is input enough; a file that is not a base64 data: URL is a 400', async () => {
    expect((await chat([{ type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${FIXTURE_PNG}` }])).status).toBe(200);
    const remote = await chat([{ type: 'text', text: 'x' }, { type: 'file', mediaType: 'image/png', url: 'https://example.com/a.png' }]);
    expect([remote.status, remote.json]).toEqual([400, { error: { code: 'invalid_field', message: 'File part 2 of the last message must carry its content as a base64 data: URL.' } }]);
    const broken = await chat([{ type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,%%%' }]);
    expect([broken.status, broken.json]).toEqual([400, { error: { code: 'invalid_field', message: "The last message's content part 1 needs base64 'data' (no data: prefix)." } }]);
  });
});
