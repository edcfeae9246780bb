import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, Runner, type ContentPart, type RunEvent } from '../../src/index.js';
import { ScriptedModel, call, text } from '../../src/entry/testing.js';
import { aiSdkModel } from '../../src/models/ai-sdk.js';
import { mcp, mcpContentParts, type McpServer } from '../../src/mcp/index.js';
import { collect } from '../helpers.js';
import { fakeLanguageModel, finish } from '../models/fake-language-model.js';
import { FIXTURE_PDF, FIXTURE_PNG } from '../fixtures/mcp/fixture-server.mjs';

const FIXTURE = fileURLToPath(new URL('../fixtures/mcp/stdio-server.mjs', import.meta.url));

const screenshotParts: ContentPart[] = [
  { type: 'text', text: 'the screen:' },
  { type: 'image', data: FIXTURE_PNG, mediaType: 'image/png' },
  { type: 'file', data: FIXTURE_PDF, mediaType: 'application/pdf', filename: 'file:///tmp/report.pdf' },
];
const screenshotText = 'the screen:\n[image: image/png, 70 bytes]\n[file: file:///tmp/report.pdf, application/pdf, 26 bytes]';

const completedCall = (events: RunEvent[]) => events.find((e): e is Extract<RunEvent, { type: 'tool_call_completed' }> => e.type === 'tool_call_completed')!;

describe('MCP image and resource results keep their parts (real stdio fixture server)', () => {
  let fx: McpServer;
  beforeAll(async () => {
    fx = await mcp({ name: 'fx', command: process.execPath, args: [FIXTURE] });
  });
  afterAll(async () => {
    await fx.close();
  });

  it('an image and a blob resource arrive as image and file parts, with their projection as the output', async () => {
    const model = new ScriptedModel([call('fx__screenshot', {}, 's1'), text('seen')]);
    const events = await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'look'));
    expect(completedCall(events)).toMatchObject({ isError: false, output: screenshotText, parts: screenshotParts });
    expect(model.requests[1]!.messages.at(-1)).toEqual({ role: 'tool', callId: 's1', name: 'fx__screenshot', content: screenshotText, isError: false, parts: screenshotParts });
  });

  it('a provider that takes media gets them as image-data and file-data', async () => {
    const provider = fakeLanguageModel(
      [
        { parts: [{ type: 'tool-call', toolCallId: 's1', toolName: 'fx__screenshot', input: '{}' }, finish('tool-calls')] },
        { parts: [{ type: 'text-delta', id: 't', delta: 'seen' }, finish()] },
      ],
      { provider: 'google.generative-ai' },
    );
    await Runner.run(new Agent({ name: 'a', model: aiSdkModel(provider), tools: fx.tools }), 'look');
    const result = provider.calls[1]!.prompt.find((m) => m.role === 'tool')!.content[0];
    expect(result).toEqual({
      type: 'tool-result',
      toolCallId: 's1',
      toolName: 'fx__screenshot',
      output: {
        type: 'content',
        value: [
          { type: 'text', text: 'the screen:' },
          { type: 'image-data', data: FIXTURE_PNG, mediaType: 'image/png' },
          { type: 'file-data', data: FIXTURE_PDF, mediaType: 'application/pdf', filename: 'file:///tmp/report.pdf' },
        ],
      },
    });
  });

  it('a text-only result stays text; the rich result (image, link, text resource) keeps the text it always had', async () => {
    const model = new ScriptedModel([call('fx__rich', {}, 'r1'), text('ok')]);
    const done = completedCall(await collect(Runner.stream(new Agent({ name: 'a', model, tools: fx.tools }), 'go')));
    expect(done.output).toBe('a picture:\n[image: image/png, 8 bytes]\n[resource link: file:///tmp/report.txt (report)]\nembedded memo');
    expect(done.parts).toEqual([
      { type: 'text', text: 'a picture:' },
      { type: 'image', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
      { type: 'text', text: '[resource link: file:///tmp/report.txt (report)]' },
      { type: 'text', text: 'embedded memo' },
    ]);
    expect(mcpContentParts({ content: [{ type: 'text', text: 'x' }] })).toEqual([{ type: 'text', text: 'x' }]);
    // A malformed image block: the result stays text.
    expect(mcpContentParts({ content: [{ type: 'image', data: '%%', mimeType: 'image/png' }] })).toBeUndefined();
  });
});
