/**
 * `troupe/ai-sdk`: real models through any AI SDK provider, AI SDK 6 (`LanguageModelV3`,
 * `@ai-sdk/provider` 3.x) or AI SDK 7 (`LanguageModelV4`, 4.x), their error type, and
 * `modelFromEnv` (the `TROUPE_MODEL` reader the CLI uses). Loads no `@ai-sdk/*` package
 * itself: the application brings its provider; `modelFromEnv` loads
 * `@ai-sdk/openai-compatible` when TROUPE_MODEL asks for it.
 */
export {
  aiSdkModel,
  AiSdkModel,
  defaultParallelToolCalls,
  type AiSdkLanguageModel,
  type AiSdkModelOptions,
  type AiSdkProviderOptions,
  type AiSdkSpecificationVersion,
  type ParallelToolCallsMapper,
} from '../models/ai-sdk.js';
export { ProviderError } from '../models/provider-error.js';
export { modelFromEnv, type Env as ModelEnv } from '../cli/model-from-env.js';
