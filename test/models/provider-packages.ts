/**
 * The real AI SDK provider packages the adapter is tested against, one per specification
 * troupe speaks: `@ai-sdk/openai-compatible` 2.x (AI SDK 6, LanguageModelV3) and 3.x
 * (AI SDK 7, LanguageModelV4; installed under the npm alias `openai-compatible-3`). The 3.x
 * packages need Node >= 22: on an older Node their tests are skipped with that reason, and
 * `.ci/run` runs the whole suite again on Node 24, so every test runs somewhere.
 */
import type { createOpenAICompatible } from '@ai-sdk/openai-compatible';

export interface ProviderPackage {
  /** For test names. */
  readonly label: string;
  /** The specificationVersion its models report. */
  readonly spec: 'v3' | 'v4';
  /** Why this package's tests do not run on this Node; undefined when they do. */
  readonly skip: string | undefined;
  /** The package's `createOpenAICompatible` (imported on first call, so a skipped package is never loaded). */
  load(): Promise<typeof createOpenAICompatible>;
}

const nodeMajor = Number(process.versions.node.split('.')[0]);

export const PROVIDER_PACKAGES: readonly ProviderPackage[] = [
  {
    label: '@ai-sdk/openai-compatible 2.x (AI SDK 6, LanguageModelV3)',
    spec: 'v3',
    skip: undefined,
    load: async () => (await import('@ai-sdk/openai-compatible')).createOpenAICompatible,
  },
  {
    label: '@ai-sdk/openai-compatible 3.x (AI SDK 7, LanguageModelV4)',
    spec: 'v4',
    skip: nodeMajor < 22 ? `AI SDK 7 packages need Node >= 22, this is Node ${process.versions.node}; .ci/run runs them on Node 24` : undefined,
    // The 3.x types differ only in the model type it returns, which aiSdkModel takes either way.
    load: async () => (await import('openai-compatible-3')).createOpenAICompatible as unknown as typeof createOpenAICompatible,
  },
];

/** A describe title that says when and why the block is skipped. */
export function titleFor(pkg: ProviderPackage, what: string): string {
  return pkg.skip ? `${what}, ${pkg.label} (skipped: ${pkg.skip})` : `${what}, ${pkg.label}`;
}
