/**
 * `troupe/ai-sdk`: real models through any AI SDK provider (`@ai-sdk/provider` 3.x), their
 * error type, and `modelFromEnv` (the `TROUPE_MODEL` reader the CLI uses).
 */
export { aiSdkModel, AiSdkModel, defaultParallelToolCalls, type AiSdkModelOptions, type ParallelToolCallsMapper } from '../models/ai-sdk.js';
export { ProviderError } from '../models/provider-error.js';
export { modelFromEnv, type Env as ModelEnv } from '../cli/model-from-env.js';
