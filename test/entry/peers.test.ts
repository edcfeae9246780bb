import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { assertPeerInstalled, importPeer, missingPeer, requirePeer } from '../../src/peers.js';

const ABSENT = 'troupe-test-absent-peer';
const message = `troupe/x needs the package '${ABSENT}', which is not installed. Install it next to troupe: npm install ${ABSENT}`;

describe('optional peers', () => {
  it('a missing peer is a UserError that names the package, who needs it and the install command', () => {
    expect(missingPeer(ABSENT, 'troupe/x')).toBeInstanceOf(UserError);
    expect(() => requirePeer(ABSENT, 'troupe/x')).toThrow(UserError);
    expect(() => requirePeer(ABSENT, 'troupe/x')).toThrow(message);
    expect(() => assertPeerInstalled(ABSENT, 'troupe/x')).toThrow(message);
    expect(() => assertPeerInstalled(ABSENT, 'troupe/x', `${ABSENT}/client/index.js`)).toThrow(message);
  });

  it('a dynamic import of a missing peer rejects with the same UserError', async () => {
    const specifier = ABSENT;
    await expect(importPeer(() => import(/* @vite-ignore */ specifier), ABSENT, 'troupe/x')).rejects.toThrow(message);
    await expect(importPeer(() => import(/* @vite-ignore */ `${specifier}/client/index.js`), ABSENT, 'troupe/x')).rejects.toThrow(message);
  });

  it('an installed peer is the module require gives; other load failures keep their own error', async () => {
    expect(requirePeer('pg', 'troupe/postgres')).toBe(createRequire(import.meta.url)('pg'));
    expect(assertPeerInstalled('@modelcontextprotocol/sdk', 'troupe/mcp', '@modelcontextprotocol/sdk/client/index.js')).toBeUndefined();
    // A file the package does not export: its own error, not "not installed".
    expect(() => requirePeer('pg/no-such-file.js', 'troupe/postgres')).toThrow(expect.objectContaining({ code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' }));
    // A dependency missing inside an installed peer (a broken install): passed on as it is.
    const inside = Object.assign(new Error(`Cannot find package 'split2' imported from /app/node_modules/pg/lib/index.js`), { code: 'ERR_MODULE_NOT_FOUND' });
    await expect(importPeer(() => Promise.reject(inside), 'pg', 'troupe/postgres')).rejects.toBe(inside);
  });
});
