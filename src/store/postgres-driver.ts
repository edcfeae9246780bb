/**
 * The `pg` driver, an optional peer: loaded when `troupe/postgres` is imported, so a missing
 * install fails there with a UserError that says what to install.
 */
import type * as Pg from 'pg';
import { requirePeer } from '../peers.js';

// `require` gives pg's CommonJS build, the one its ESM wrapper re-exports.
export const pg = requirePeer<typeof Pg>('pg', 'troupe/postgres');
