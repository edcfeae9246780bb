/**
 * Caps tool output before it enters the transcript. Lengths count Unicode code points,
 * so an emoji is one character and a surrogate pair is never split.
 */
export function truncateOutput(text: string, limit: number | null): { text: string; truncated: boolean } {
  // Code points never outnumber UTF-16 units, so short strings skip the count entirely.
  if (limit === null || text.length <= limit) return { text, truncated: false };
  const points = Array.from(text);
  if (points.length <= limit) return { text, truncated: false };
  const head = Math.max(1, Math.floor(limit * 0.8));
  const tail = Math.max(0, limit - head);
  const marker = `\n\n[... tool output truncated: kept ${formatCount(head + tail)} of ${formatCount(points.length)} chars ...]\n\n`;
  const kept = points.slice(0, head).join('') + marker + (tail > 0 ? points.slice(points.length - tail).join('') : '');
  return { text: kept, truncated: true };
}

function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}
