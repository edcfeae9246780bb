/** How an MCP tool result reaches the model: its text rendering and its content parts. */
import { base64Bytes, contentPartsIssue, type ContentPart } from '../message-parts.js';

/**
 * What the model sees of an MCP result: text blocks as they are, embedded text
 * resources as their text, other blocks as one-line placeholders, and the structured
 * content as JSON when there are no blocks.
 */
export function renderContent(result: { content?: unknown; structuredContent?: unknown; toolResult?: unknown }): string {
  const blocks = Array.isArray(result.content) ? (result.content as Array<Record<string, any>>) : [];
  if (blocks.length === 0) {
    if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
    if (result.toolResult !== undefined) return typeof result.toolResult === 'string' ? result.toolResult : JSON.stringify(result.toolResult);
    return '';
  }
  return blocks
    .map((block) => {
      switch (block.type) {
        case 'text':
          return String(block.text);
        case 'image':
        case 'audio':
          return `[${block.type}: ${block.mimeType}, ${base64Bytes(block.data)} bytes]`;
        case 'resource_link':
          return `[resource link: ${block.uri}${block.name ? ` (${block.name})` : ''}]`;
        case 'resource': {
          const resource = block.resource ?? {};
          if (typeof resource.text === 'string') return resource.text;
          return `[resource: ${resource.uri}${resource.mimeType ? `, ${resource.mimeType}` : ''}, ${base64Bytes(resource.blob)} bytes]`;
        }
        default:
          return JSON.stringify(block);
      }
    })
    .join('\n');
}

/**
 * An MCP result's blocks as troupe content parts: text as text, images as image parts,
 * audio and blob resources as file parts (a blob's filename is its URI), embedded text
 * resources as their text, links and unknown blocks as the one-line text `renderContent`
 * gives them. Undefined when the result has no blocks, or a media block is malformed
 * (then the result stays text).
 */
export function contentParts(result: { content?: unknown }): ContentPart[] | undefined {
  const blocks = Array.isArray(result.content) ? (result.content as Array<Record<string, any>>) : [];
  if (blocks.length === 0) return undefined;
  const parts: ContentPart[] = blocks.map((block): ContentPart => {
    switch (block.type) {
      case 'image':
        return { type: 'image', data: String(block.data), mediaType: String(block.mimeType) };
      case 'audio':
        return { type: 'file', data: String(block.data), mediaType: String(block.mimeType) };
      case 'resource': {
        const resource = block.resource ?? {};
        if (typeof resource.blob === 'string') {
          return { type: 'file', data: resource.blob, mediaType: typeof resource.mimeType === 'string' ? resource.mimeType : 'application/octet-stream', filename: String(resource.uri) };
        }
        return { type: 'text', text: renderContent({ content: [block] }) };
      }
      default:
        return { type: 'text', text: renderContent({ content: [block] }) };
    }
  });
  return contentPartsIssue(parts) === undefined ? parts : undefined;
}
