import type { ZodType } from 'zod';

export type OutputCheck = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly message: string };

/**
 * Structured output rule: the final text must be JSON (a ```json fence around it is
 * accepted) that the agent's outputType validates. Pure.
 */
export function checkOutput(outputType: ZodType, text: string): OutputCheck {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(text);
  const json = (fenced ? fenced[1]! : text).trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch (error) {
    return { ok: false, message: `the reply is not valid JSON (${(error as Error).message})` };
  }
  const result = outputType.safeParse(parsed);
  if (result.success) return { ok: true, value: result.data };
  const issues = result.error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
  return { ok: false, message: `the reply does not match the output schema: ${issues}` };
}

/** The user message of the one repair turn. */
export function repairPrompt(message: string): string {
  return `Your last reply was not valid: ${message}. Reply again with only the JSON value, matching the required schema.`;
}
