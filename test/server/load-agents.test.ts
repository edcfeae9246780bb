import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AgentsModuleError, loadAgents } from '../../src/cli/load-agents.js';
import { serve } from '../../src/cli/serve.js';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

describe('troupe serve --agents <module>', () => {
  it('loads a .ts module through tsx: its agents by name', async () => {
    const agents = await loadAgents(fixture('agents-module.ts'));
    expect(Object.keys(agents)).toEqual(['calc']);
    // The fixture registers a factory (scripted models are single-use).
    expect(typeof agents.calc).toBe('function');
    const calc = (agents.calc as () => { name: string; toolTable(): Map<string, unknown> })();
    expect(calc.name).toBe('calc');
    expect([...calc.toolTable().keys()]).toEqual(['add']);
  });

  it('a module whose default export holds no agents is refused with one line naming the file and what it found', async () => {
    const path = fixture('no-agents.ts');
    const error = await loadAgents(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentsModuleError);
    expect((error as AgentsModuleError).file).toBe(path);
    expect((error as Error).message).toBe(`${path}: export \`default\` has no agents (each value must be an Agent or a function returning one), found x: number 42.`);
  });

  it('a module with neither `agents` nor a default export lists its exports', async () => {
    const path = fixture('named-exports.ts');
    await expect(loadAgents(path)).rejects.toThrow(`${path} exports no agents: expected \`agents\` (or a default export) mapping names to Agents or factories, found exports label (string "not an agent"), x (number 42).`);
  });

  it('serve refuses to start with it (nothing listens)', async () => {
    const path = fixture('no-agents.ts');
    await expect(serve(['--port', '0', '--agents', path, '--db', 'off'], () => undefined)).rejects.toBeInstanceOf(AgentsModuleError);
  });

  it('a file that is not there is an AgentsModuleError naming it', async () => {
    const error = (await loadAgents('./nope/agents.ts').catch((e: unknown) => e)) as AgentsModuleError;
    expect(error).toBeInstanceOf(AgentsModuleError);
    expect(error.message).toMatch(/^\.\/nope\/agents\.ts could not be imported: /);
  });
});
