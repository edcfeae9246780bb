/** Types of scripts/patch-xstate.mjs (for test/xstate-patch.test.ts). */
export declare const XSTATE_VERSION: string;
export declare const PATCHED_FILES: readonly string[];
export declare const ORIGINAL: string;
export declare const PATCHED: string;
/** @throws Error when the version or a file's text is not the one the patch is for */
export declare function patchXstate(xstateDir: string): string[];
