/**
 * Content parts (text, image, file) of user input and tool results, reasoning parts with
 * their provider metadata, and the checks every layer shares (tool results, run input, the
 * stored log). Media data is base64 text, so every part is plain JSON.
 */
import { UserError } from './errors.js';

/**
 * Provider-specific data keyed by provider name (the AI SDK's `providerMetadata` /
 * `providerOptions`, e.g. `{ anthropic: { signature } }`). Plain JSON, kept opaque: troupe
 * stores it and sends it back to the provider as it came.
 */
export type ProviderMetadata = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

export interface TextPart {
  readonly type: 'text';
  readonly text: string;
}

export interface ImagePart {
  readonly type: 'image';
  /** Base64 (no `data:` prefix). */
  readonly data: string;
  /** `image/png`, `image/jpeg`, … */
  readonly mediaType: string;
}

export interface FilePart {
  readonly type: 'file';
  /** Base64 (no `data:` prefix). */
  readonly data: string;
  /** IANA media type, e.g. `application/pdf`. */
  readonly mediaType: string;
  readonly filename?: string;
}

/** One part of a user message or a tool result. */
export type ContentPart = TextPart | ImagePart | FilePart;

/**
 * One reasoning block of a reply, with the provider's metadata (a signature, encrypted
 * content). A block with empty `text` and only metadata (e.g. Anthropic's redacted thinking,
 * `providerMetadata.anthropic.redactedData`) is opaque: never shown, sent back as it came.
 */
export interface ReasoningPart {
  readonly text: string;
  readonly providerMetadata?: ProviderMetadata;
}

const PART_TYPES = new Set(['text', 'image', 'file']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const MEDIA_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9*][a-z0-9!#$&^_.+-]*$/i;

/**
 * Whether `value` is meant as content parts: a non-empty array whose every element is an
 * object with a part `type` ('text', 'image', 'file'). Such an array is then checked
 * strictly (`checkContentParts`); any other array is ordinary data.
 */
export function looksLikeContentParts(value: unknown): value is unknown[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((p) => typeof p === 'object' && p !== null && PART_TYPES.has((p as { type?: unknown }).type as string))
  );
}

/** What is wrong with one content part, or undefined when it is well formed. */
export function contentPartIssue(part: unknown): string | undefined {
  if (typeof part !== 'object' || part === null || Array.isArray(part)) return 'must be an object';
  const p = part as Record<string, unknown>;
  switch (p.type) {
    case 'text':
      return typeof p.text === 'string' ? undefined : "needs a string 'text'";
    case 'image':
    case 'file': {
      if (typeof p.mediaType !== 'string' || !MEDIA_TYPE.test(p.mediaType)) return `needs a 'mediaType' such as "${p.type === 'image' ? 'image/png' : 'application/pdf'}"`;
      if (p.type === 'image' && !p.mediaType.toLowerCase().startsWith('image/')) return `is an image but its mediaType is "${p.mediaType}"`;
      if (typeof p.data !== 'string' || p.data.length === 0 || p.data.length % 4 !== 0 || !BASE64.test(p.data)) return "needs base64 'data' (no data: prefix)";
      if (p.type === 'file' && p.filename !== undefined && typeof p.filename !== 'string') return "has a 'filename' that is not a string";
      return undefined;
    }
    default:
      return `has an unknown type ${JSON.stringify(p.type)}; expected text, image or file`;
  }
}

/** What is wrong with a list of content parts (naming the part), or undefined. */
export function contentPartsIssue(parts: unknown): string | undefined {
  if (!Array.isArray(parts)) return 'must be an array of content parts';
  if (parts.length === 0) return 'must hold at least one content part';
  for (let i = 0; i < parts.length; i++) {
    const issue = contentPartIssue(parts[i]);
    if (issue) return `part ${i + 1} ${issue}`;
  }
  return undefined;
}

/** The parts as plain, frozen-shape copies. @throws UserError naming `where` and the bad part */
export function checkContentParts(parts: unknown, where: string): ContentPart[] {
  const issue = contentPartsIssue(parts);
  if (issue) throw new UserError(`${where}: content ${issue}.`);
  return (parts as ContentPart[]).map(copyPart);
}

function copyPart(part: ContentPart): ContentPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return { type: 'image', data: part.data, mediaType: part.mediaType };
    case 'file':
      return part.filename === undefined
        ? { type: 'file', data: part.data, mediaType: part.mediaType }
        : { type: 'file', data: part.data, mediaType: part.mediaType, filename: part.filename };
  }
}

/**
 * The text a model without media support sees (and the message's `content`): text parts as
 * they are, media as one-line placeholders (`[image: image/png, 68 bytes]`,
 * `[file: report.pdf, application/pdf, 1024 bytes]`), joined by newlines.
 */
export function partsText(parts: readonly ContentPart[]): string {
  return parts
    .map((part) => {
      switch (part.type) {
        case 'text':
          return part.text;
        case 'image':
          return `[image: ${part.mediaType}, ${base64Bytes(part.data)} bytes]`;
        case 'file':
          return `[file: ${part.filename ? `${part.filename}, ` : ''}${part.mediaType}, ${base64Bytes(part.data)} bytes]`;
      }
    })
    .join('\n');
}

/** Whether any part is media (image or file), i.e. the parts say more than their text. */
export function hasMedia(parts: readonly ContentPart[] | undefined): boolean {
  return parts !== undefined && parts.some((p) => p.type !== 'text');
}

/** Decoded size of base64 text. */
export function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** What is wrong with provider metadata (must be an object of objects), or undefined. */
export function providerMetadataIssue(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object keyed by provider';
  for (const [provider, entry] of Object.entries(value)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return `entry '${provider}' must be an object`;
  }
  return undefined;
}

/** What is wrong with a list of reasoning parts, or undefined. */
export function reasoningPartsIssue(parts: unknown): string | undefined {
  if (!Array.isArray(parts)) return 'must be an array of reasoning parts';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i] as Record<string, unknown> | null;
    if (typeof part !== 'object' || part === null || Array.isArray(part)) return `part ${i + 1} must be an object`;
    if (typeof part.text !== 'string') return `part ${i + 1} needs a string 'text'`;
    if (part.providerMetadata !== undefined) {
      const issue = providerMetadataIssue(part.providerMetadata);
      if (issue) return `part ${i + 1} providerMetadata ${issue}`;
    }
  }
  return undefined;
}
