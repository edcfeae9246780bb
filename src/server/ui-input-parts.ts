/**
 * The input of a UI chat request from the last user message's parts: its text parts, and
 * its file parts (images, PDFs, … as `data:` URLs, as `useChat` sends attachments) as troupe
 * content parts. Other part types (reasoning, step markers, tools) carry no input.
 */
import { contentPartsIssue, type ContentPart } from '../message-parts.js';
import { HttpError } from './http.js';

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*);base64,(.*)$/s;

export interface UIInput {
  /** The text parts joined by newlines. */
  readonly text: string;
  /** All parts in order, when a file part is among them. */
  readonly parts?: ContentPart[];
}

/** @throws HttpError 400 `invalid_field` for a file part that is not a base64 data: URL or whose content is malformed */
export function uiInputOf(uiParts: readonly unknown[]): UIInput {
  const parts: ContentPart[] = [];
  let hasFile = false;
  uiParts.forEach((raw, index) => {
    if (typeof raw !== 'object' || raw === null) return;
    const part = raw as { type?: unknown; text?: unknown; url?: unknown; mediaType?: unknown; filename?: unknown };
    if (part.type === 'text' && typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
    if (part.type !== 'file') return;
    hasFile = true;
    const match = typeof part.url === 'string' ? DATA_URL.exec(part.url) : null;
    if (!match) throw new HttpError(400, 'invalid_field', `File part ${index + 1} of the last message must carry its content as a base64 data: URL.`);
    const mediaType = typeof part.mediaType === 'string' && part.mediaType !== '' ? part.mediaType : match[1]!;
    const data = match[3]!;
    if (mediaType.toLowerCase().startsWith('image/')) parts.push({ type: 'image', data, mediaType });
    else parts.push(typeof part.filename === 'string' ? { type: 'file', data, mediaType, filename: part.filename } : { type: 'file', data, mediaType });
  });
  const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n');
  if (!hasFile) return { text };
  const issue = contentPartsIssue(parts);
  if (issue) throw new HttpError(400, 'invalid_field', `The last message's content ${issue}.`);
  return { text, parts };
}
