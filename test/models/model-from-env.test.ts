import { afterEach, describe, expect, it } from 'vitest';
import { Agent, Runner, UserError } from '../../src/index.js';
import { modelFromEnv } from '../../src/cli/model-from-env.js';
import { startChatServer, textReply, type ChatServer } from './openai-server.js';

let server: ChatServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function userError(env: Record<string, string>): string {
  try {
    modelFromEnv(env);
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    return (error as Error).message;
  }
  throw new Error('expected a UserError');
}

describe('modelFromEnv', () => {
  it('returns undefined when TROUPE_MODEL is unset or blank', () => {
    expect(modelFromEnv({})).toBeUndefined();
    expect(modelFromEnv({ TROUPE_MODEL: '  ' })).toBeUndefined();
    expect(modelFromEnv({ TROUPE_API_KEY: 'k' })).toBeUndefined();
  });

  it('builds an openai-compatible model; the model id may contain colons', () => {
    const model = modelFromEnv({ TROUPE_MODEL: 'openai-compatible:llama3.1:8b', TROUPE_BASE_URL: 'http://localhost:11434/v1' });
    expect(model?.name).toBe('local.chat:llama3.1:8b');
  });

  it('rejects malformed values with a clear UserError', () => {
    expect(userError({ TROUPE_MODEL: 'gpt-4o' })).toBe("TROUPE_MODEL 'gpt-4o' has no provider: use TROUPE_MODEL=openai-compatible:<model>.");
    expect(userError({ TROUPE_MODEL: 'openai:gpt-4o', TROUPE_BASE_URL: 'http://x/v1' })).toBe(
      "TROUPE_MODEL provider 'openai' is not supported: use one of openai-compatible (TROUPE_MODEL=openai-compatible:<model>).",
    );
    expect(userError({ TROUPE_MODEL: 'openai-compatible:', TROUPE_BASE_URL: 'http://x/v1' })).toBe(
      "TROUPE_MODEL 'openai-compatible:' has no model id: use TROUPE_MODEL=openai-compatible:<model>.",
    );
    expect(userError({ TROUPE_MODEL: 'openai-compatible:qwen3' })).toBe(
      'TROUPE_BASE_URL must be set for TROUPE_MODEL=openai-compatible:qwen3, e.g. http://localhost:11434/v1 (Ollama) or http://localhost:8000/v1 (vLLM).',
    );
    expect(userError({ TROUPE_MODEL: 'openai-compatible:qwen3', TROUPE_BASE_URL: 'localhost 11434' })).toBe(
      "TROUPE_BASE_URL 'localhost 11434' is not a URL: use e.g. http://localhost:11434/v1.",
    );
    expect(userError({ TROUPE_MODEL: 'openai-compatible:qwen3', TROUPE_BASE_URL: 'ftp://models.local/v1' })).toBe(
      "TROUPE_BASE_URL 'ftp://models.local/v1' must be an http:// or https:// URL.",
    );
    expect(userError({ TROUPE_BASE_URL: 'http://localhost:11434/v1' })).toBe(
      'TROUPE_BASE_URL is set but TROUPE_MODEL is not: set TROUPE_MODEL=openai-compatible:<model>.',
    );
  });

  it('runs an agent against the loopback server, with the API key as a bearer token and usage requested', async () => {
    server = await startChatServer([textReply('hello from the wire', { usage: [3, 4] })]);
    const model = modelFromEnv({ TROUPE_MODEL: 'openai-compatible:tiny-model', TROUPE_BASE_URL: server.baseURL, TROUPE_API_KEY: 'sk-local' });
    const result = await Runner.run(new Agent({ name: 'cli', instructions: 'Greet.', model: model! }), 'hi');
    expect(result.output).toBe('hello from the wire');
    expect(result.usage).toEqual({ inputTokens: 3, outputTokens: 4, totalTokens: 7, requests: 1 });
    const [request] = server.requests;
    expect(request!.headers.authorization).toBe('Bearer sk-local');
    expect(request!.body).toMatchObject({ model: 'tiny-model', stream: true, stream_options: { include_usage: true } });
  });

  it('sends no Authorization header without TROUPE_API_KEY', async () => {
    server = await startChatServer([textReply('ok')]);
    const model = modelFromEnv({ TROUPE_MODEL: 'openai-compatible:tiny-model', TROUPE_BASE_URL: server.baseURL });
    await Runner.run(new Agent({ name: 'cli', model: model! }), 'hi');
    expect(server.requests[0]!.headers.authorization).toBeUndefined();
  });
});
