import type { Attributes } from '@opentelemetry/api';

/**
 * Attribute names troupe's spans use. `gen_ai.*` follow the OpenTelemetry GenAI semantic
 * conventions (development status; both `gen_ai.provider.name` and its older name
 * `gen_ai.system` are set so backends on either version read them). `troupe.*` are ours:
 * orchestration facts no convention covers yet.
 */
export const ATTR = {
  operation: 'gen_ai.operation.name',
  provider: 'gen_ai.provider.name',
  system: 'gen_ai.system',
  requestModel: 'gen_ai.request.model',
  agentName: 'gen_ai.agent.name',
  inputTokens: 'gen_ai.usage.input_tokens',
  outputTokens: 'gen_ai.usage.output_tokens',
  finishReasons: 'gen_ai.response.finish_reasons',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  errorType: 'error.type',
  runId: 'troupe.run.id',
  parentRunId: 'troupe.run.parent_id',
  runPath: 'troupe.run.path',
  turn: 'troupe.turn',
  turns: 'troupe.run.turns',
  finalAgent: 'troupe.run.final_agent',
  runInputTokens: 'troupe.usage.input_tokens',
  runOutputTokens: 'troupe.usage.output_tokens',
  runTotalTokens: 'troupe.usage.total_tokens',
  runRequests: 'troupe.usage.requests',
  modelName: 'troupe.model.name',
  toolExecuted: 'troupe.tool.executed',
  toolTerminate: 'troupe.tool.terminate',
  attempt: 'troupe.tool.attempt',
  errorMessage: 'troupe.error.message',
  approvalId: 'troupe.approval.id',
  approvalDecision: 'troupe.approval.decision',
  approvalDecidedBy: 'troupe.approval.decided_by',
  approvalReason: 'troupe.approval.reason',
  barrierInFlight: 'troupe.barrier.in_flight',
  handoffFrom: 'troupe.handoff.from',
  handoffTo: 'troupe.handoff.to',
} as const;

/** `gen_ai.operation.name` values troupe emits. */
export type GenAiOperation = 'invoke_agent' | 'chat' | 'execute_tool';

/** AI SDK provider ids (the part before the first dot) → well-known `gen_ai.provider.name` values. */
const PROVIDER_IDS: Readonly<Record<string, string>> = {
  openai: 'openai',
  anthropic: 'anthropic',
  google: 'gcp.gemini',
  'google-vertex': 'gcp.vertex_ai',
  vertex: 'gcp.vertex_ai',
  'amazon-bedrock': 'aws.bedrock',
  bedrock: 'aws.bedrock',
  azure: 'azure.ai.openai',
  'azure-openai': 'azure.ai.openai',
  mistral: 'mistral_ai',
  xai: 'x_ai',
  groq: 'groq',
  deepseek: 'deepseek',
  cohere: 'cohere',
  perplexity: 'perplexity',
};

/** Model id prefixes → provider, for model names without a provider part. */
const MODEL_PREFIXES: ReadonlyArray<readonly [RegExp, string]> = [
  [/^(gpt-|chatgpt|o\d)/i, 'openai'],
  [/^claude/i, 'anthropic'],
  [/^gemini/i, 'gcp.gemini'],
  [/^(mistral|mixtral|codestral|ministral|magistral)/i, 'mistral_ai'],
  [/^grok/i, 'x_ai'],
  [/^deepseek/i, 'deepseek'],
  [/^command/i, 'cohere'],
];

/** What a model's name says about it. */
export interface ModelIdentity {
  /** The model id (`gen_ai.request.model`): the part after `<provider>:` when there is one. */
  readonly model: string;
  /** `gen_ai.provider.name`, when the name tells it; undefined otherwise. */
  readonly provider: string | undefined;
}

/**
 * Reads a troupe `Model.name`: the AI SDK adapter's `<provider>:<modelId>` (for example
 * `openai.chat:gpt-4o` → provider `openai`, model `gpt-4o`; unknown provider ids are kept
 * as they are), or a bare model id whose provider is guessed from well-known prefixes
 * (`claude-…` → `anthropic`). Pure; never throws.
 */
export function modelIdentity(name: string): ModelIdentity {
  const colon = name.indexOf(':');
  if (colon > 0) {
    const providerId = name.slice(0, colon).split('.')[0]!.toLowerCase();
    return { model: name.slice(colon + 1) || name, provider: PROVIDER_IDS[providerId] ?? providerId };
  }
  const guess = MODEL_PREFIXES.find(([pattern]) => pattern.test(name));
  return { model: name, provider: guess?.[1] };
}

/** The provider and model attributes for a model name (none when the name is unknown). */
export function modelAttributes(name: string | undefined): Attributes {
  if (!name) return {};
  const { model, provider } = modelIdentity(name);
  const attributes: Attributes = { [ATTR.requestModel]: model, [ATTR.modelName]: name };
  if (provider) {
    attributes[ATTR.provider] = provider;
    attributes[ATTR.system] = provider;
  }
  return attributes;
}

/** `error.type`: the error's class name (troupe errors set `name` to their class). */
export function errorType(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  if (error.name && error.name !== 'Error') return error.name;
  return error.constructor?.name || 'Error';
}
