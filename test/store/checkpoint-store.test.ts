// The behaviour every store shares is in the contract suites (contract.test.ts).
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { MemoryCheckpointStore } from '../../src/store/checkpoint-store.js';
import { expectUserError, head } from './store-helpers.js';

describe('UserError from the stores', () => {
  it('is the errors.ts class, with its code', () => {
    const store = new MemoryCheckpointStore();
    const error = expectUserError(() => store.append('r', [{ kind: 'x' } as never], head()), 'Cannot append to run \'r\': entry 1 of this append is invalid: unknown entry kind "x".');
    expect(error.code).toBe('USER_ERROR');
    expect(error.name).toBe('UserError');
    expect(error).toBeInstanceOf(UserError);
  });
});
