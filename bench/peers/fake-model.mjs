/**
 * The one fake model every framework is driven by. Framework-neutral: each adapter only
 * wraps `next()` in its own model port (troupe: a Model's async `stream`; pi: a StreamFn).
 *
 * - The script is a list of call counts, one per model request; 0 means "reply with text".
 * - Every reply is built fresh (new call objects, new id strings), so no framework can profit
 *   from reusing a frozen reply object.
 * - Tool arguments are JSON text ('{}'), as a provider delivers them; parsing is the
 *   framework's (or, for pi, its provider adapter's) job.
 * - Before answering request k+1, the request is checked to end with the results of every
 *   call of reply k (each result 'ok'); if not, `next()` throws.
 */
export const TOOL_NAME = 'noop';
export const FINAL_TEXT = 'done';

export class FakeScript {
  /**
   * @param {number[]} turns call counts per request; the last must be 0
   * @param {number[] | undefined} stamps if given, performance.now() is pushed at each request
   */
  constructor(turns, stamps) {
    this.turns = turns;
    this.stamps = stamps;
    this.index = 0;
    this.pending = [];
  }

  /**
   * @param {readonly unknown[]} messages the request's transcript, as the framework sends it
   * @param {(message: unknown) => string | undefined} resultId the call id when `message` is a
   *   tool result whose text is 'ok', otherwise undefined
   * @returns {{ text: string, calls: { id: string, name: string, arguments: string }[] }}
   */
  next(messages, resultId) {
    if (this.stamps) this.stamps.push(performance.now());
    const expected = this.pending;
    if (expected.length > 0) {
      if (messages.length < expected.length) throw new Error(`request ${this.index + 1}: transcript too short for ${expected.length} results`);
      const seen = new Set();
      for (let i = messages.length - expected.length; i < messages.length; i++) seen.add(resultId(messages[i]));
      for (const id of expected) if (!seen.has(id)) throw new Error(`request ${this.index + 1}: result of call ${id} missing`);
    }
    const count = this.turns[this.index];
    if (count === undefined) throw new Error(`script exhausted after ${this.turns.length} requests`);
    const turn = this.index++;
    const calls = [];
    for (let i = 0; i < count; i++) calls.push({ id: `t${turn}_c${i}`, name: TOOL_NAME, arguments: '{}' });
    this.pending = calls.map((c) => c.id);
    return { text: count === 0 ? FINAL_TEXT : '', calls };
  }

  /** Throws unless every scripted request was made. */
  assertDone() {
    if (this.index !== this.turns.length) throw new Error(`run ended after ${this.index} of ${this.turns.length} requests`);
  }
}
