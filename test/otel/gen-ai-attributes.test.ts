import { describe, expect, it } from 'vitest';
import { errorType, modelAttributes, modelIdentity } from '../../src/otel/gen-ai-attributes.js';
import { ModelError } from '../../src/errors.js';

describe('GenAI attributes from a model name', () => {
  it.each([
    ['openai.chat:gpt-4o', 'openai', 'gpt-4o'],
    ['anthropic.messages:claude-sonnet-4', 'anthropic', 'claude-sonnet-4'],
    ['google.generative-ai:gemini-2.5-pro', 'gcp.gemini', 'gemini-2.5-pro'],
    ['ollama.chat:llama3.1', 'ollama', 'llama3.1'],
    ['mistral.chat:mistral-large', 'mistral_ai', 'mistral-large'],
    ['gpt-4o-mini', 'openai', 'gpt-4o-mini'],
    ['claude-3-5-haiku', 'anthropic', 'claude-3-5-haiku'],
    ['scripted', undefined, 'scripted'],
  ])('%s → provider %s, model %s', (name, provider, model) => {
    expect(modelIdentity(name)).toEqual({ provider, model });
  });

  it('sets both gen_ai.provider.name and gen_ai.system, and nothing for an unknown name', () => {
    expect(modelAttributes('openai.chat:gpt-4o')).toEqual({
      'gen_ai.provider.name': 'openai',
      'gen_ai.system': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'troupe.model.name': 'openai.chat:gpt-4o',
    });
    expect(modelAttributes('scripted')).toEqual({ 'gen_ai.request.model': 'scripted', 'troupe.model.name': 'scripted' });
    expect(modelAttributes(undefined)).toEqual({});
  });

  it('names error.type after the error class', () => {
    class QuotaError extends Error {}
    expect(errorType(new ModelError('x'))).toBe('ModelError');
    expect(errorType(new TypeError('x'))).toBe('TypeError');
    expect(errorType(new QuotaError('x'))).toBe('QuotaError');
    expect(errorType('boom')).toBe('string');
  });
});
