/** Types of scripts/patch-xstate-steps.mjs (for test/xstate-step-patches.test.ts). */
export declare const XSTATE_VERSION: string;
export declare const STEP_FILES: readonly string[];
export declare const STATE_NODE_FILES: readonly string[];
export interface StepPatch {
  readonly name: string;
  readonly files: readonly string[];
  readonly original: string;
  readonly patched: string;
}
export declare const STEP_PATCHES: readonly StepPatch[];
/** @throws Error when the version or a file's text is not the one the patches are for (nothing is written then) */
export declare function patchXstateSteps(xstateDir: string): string[];
