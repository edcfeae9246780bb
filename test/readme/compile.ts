/**
 * Typechecks and compiles README blocks as ES modules inside this package, so `troupe`,
 * `troupe/testing`, … resolve through package.json "exports" to the built dist/ and its
 * .d.ts files: the same resolution a project that installed troupe gets.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import type { Block } from './blocks.js';

export interface Compiled {
  /** Block key → the compiled .js file. */
  readonly outputs: Map<string, string>;
  /** Type errors, as `<file>:<line>: <message>` with the markdown file's line numbers. */
  readonly errors: string[];
}

export function compileBlocks(root: string, dir: string, blocks: readonly Block[]): Compiled {
  mkdirSync(dir, { recursive: true });
  const sources = new Map<string, Block>();
  const outputs = new Map<string, string>();
  blocks.forEach((block, index) => {
    const name = `block-${String(index).padStart(2, '0')}`;
    const file = join(dir, `${name}.ts`);
    writeFileSync(file, block.code);
    sources.set(file, block);
    outputs.set(block.key, join(dir, `${name}.js`));
  });
  const config = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile).config as { compilerOptions: object };
  const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, root);
  const program = ts.createProgram([...sources.keys()], { ...options, rootDir: dir, outDir: dir, declaration: false, sourceMap: false, noEmit: false });
  const errors = ts.getPreEmitDiagnostics(program).map((d) => {
    const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    const block = d.file ? sources.get(d.file.fileName) : undefined;
    if (!d.file || !block) return `${d.file ? relative(root, d.file.fileName) : '(config)'}: ${message}`;
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    return `${block.file}:${block.line + line}: ${message}`;
  });
  program.emit();
  return { outputs, errors };
}
