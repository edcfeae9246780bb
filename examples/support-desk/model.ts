import type { Model } from 'troupe';
import { aiSdkModel } from 'troupe/ai-sdk';
import { ScriptedModel, type ScriptStep } from 'troupe/testing';

/**
 * The model every agent of the desk uses: a real one through the AI SDK when OPENAI_API_KEY
 * is set (OPENAI_BASE_URL points it at any OpenAI-compatible server, OPENAI_MODEL picks the
 * model), else the agent's scripted replies, so the example runs without a key or a network.
 */
export async function deskModel(script: readonly ScriptStep[]): Promise<Model> {
  const apiKey = process.env.OPENAI_API_KEY;
  if (!apiKey) return new ScriptedModel(script);
  // Loaded only for a real model.
  const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
  const provider = createOpenAICompatible({
    name: 'openai',
    baseURL: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
    apiKey,
    includeUsage: true,
  });
  return aiSdkModel(provider(process.env.OPENAI_MODEL ?? 'gpt-4o-mini'));
}
