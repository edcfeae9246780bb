/**
 * A package registry on loopback for the install test, so that `npm install` runs for real
 * (resolution, tarball download, integrity check, extraction, install scripts) with no
 * network. It serves exactly the package versions of troupe's own package-lock.json, their
 * tarballs taken from npm's cache (content-addressed by the lock's integrity; the
 * repository's `npm ci` put them there), their manifests read from the tarballs.
 *
 * Why not `npm install --offline`: that resolves ranges against whatever registry metadata
 * happens to be cached, which may name a newer version than the cached tarball (ENOTCACHED
 * as soon as a dependency publishes); serving the lock's versions makes the install
 * deterministic, and it still goes through npm's registry client like a user's install.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

interface LockEntry {
  readonly name?: string;
  readonly version?: string;
  readonly integrity?: string;
  readonly link?: boolean;
}

interface Version {
  /** The tarball in npm's cache; read when first asked for. */
  readonly file: string;
  readonly integrity: string;
}

export interface LoopbackRegistry {
  /** e.g. http://127.0.0.1:40123/ */
  readonly url: string;
  /** Requests for packages or versions it does not have (an install that needed them failed). */
  readonly misses: string[];
  close(): Promise<void>;
}

/** npm's cache folder (`npm config get cache`). */
export function npmCacheDir(): string {
  return execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
}

/** Where cacache keeps the content of `integrity` (sha512 only, as npm writes it). */
function contentPath(cache: string, integrity: string): string | undefined {
  const sha512 = integrity.split(/\s+/).find((hash) => hash.startsWith('sha512-'));
  if (!sha512) return undefined;
  const hex = Buffer.from(sha512.slice('sha512-'.length), 'base64').toString('hex');
  return join(cache, '_cacache', 'content-v2', 'sha512', hex.slice(0, 2), hex.slice(2, 4), hex.slice(4));
}

/** The package.json at the top folder of a .tgz (ustar headers, 512-byte blocks). */
function manifestOf(tarball: Buffer): Record<string, unknown> {
  const tar = gunzipSync(tarball);
  for (let offset = 0; offset + 512 <= tar.length; ) {
    const header = tar.subarray(offset, offset + 512);
    const name = header.subarray(0, 100).toString('utf8').replace(/\0.*$/s, '');
    if (name === '') break;
    const prefix = header.subarray(345, 500).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(header.subarray(124, 136).toString('utf8').replace(/\0.*$/s, '').trim() || '0', 8);
    const path = prefix ? `${prefix}/${name}` : name;
    if (/^[^/]+\/package\.json$/.test(path)) return JSON.parse(tar.subarray(offset + 512, offset + 512 + size).toString('utf8')) as Record<string, unknown>;
    offset += 512 + Math.ceil(size / 512) * 512;
  }
  throw new Error('no package.json in the tarball');
}

/** Every name@version of the lock whose tarball is in npm's cache. */
function lockedVersions(lockFile: string, cache: string): Map<string, Map<string, Version>> {
  const lock = JSON.parse(readFileSync(lockFile, 'utf8')) as { packages: Record<string, LockEntry> };
  const packages = new Map<string, Map<string, Version>>();
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.link || !entry.version || !entry.integrity) continue;
    const file = contentPath(cache, entry.integrity);
    // Optional packages for other platforms are in the lock but were never downloaded.
    if (!file || !existsSync(file)) continue;
    // An npm alias (`ai-7` → ai@7) is its real name in the lock's `name`.
    const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    const versions = packages.get(name) ?? new Map<string, Version>();
    versions.set(entry.version, { file, integrity: entry.integrity });
    packages.set(name, versions);
  }
  return packages;
}

const compareVersions = (a: string, b: string): number => {
  const parse = (v: string) => v.split(/[.+-]/).slice(0, 3).map(Number);
  const [x, y] = [parse(a), parse(b)];
  for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
};

export async function startLoopbackRegistry(lockFile: string, cache = npmCacheDir()): Promise<LoopbackRegistry> {
  const packages = lockedVersions(lockFile, cache);
  const misses: string[] = [];
  let base = '';
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!.slice(1));
    const tarball = /^-\/(.+)\/([^/]+)\.tgz$/.exec(path);
    if (tarball) {
      const version = packages.get(tarball[1]!)?.get(tarball[2]!);
      if (!version) return void (misses.push(path), res.writeHead(404).end());
      const bytes = readFileSync(version.file);
      return void res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes.length }).end(bytes);
    }
    const versions = packages.get(path);
    if (!versions) return void (misses.push(path), res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}'));
    const sorted = [...versions.keys()].sort(compareVersions);
    const packument = {
      name: path,
      'dist-tags': { latest: sorted.filter((v) => !v.includes('-')).at(-1) ?? sorted.at(-1) },
      versions: Object.fromEntries(
        [...versions].map(([version, { file, integrity }]) => [version, { ...manifestOf(readFileSync(file)), name: path, version, dist: { tarball: `${base}-/${path}/${version}.tgz`, integrity } }]),
      ),
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  return {
    url: base,
    misses,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
