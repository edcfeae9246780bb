/**
 * v3 call options → v4 (AI SDK 7). The two specifications differ, in what troupe sends, only
 * in how file data is carried: v3 puts the bytes (or base64) in `data`, v4 tags it
 * (`data: { type: 'data', data }`), and v4 tool results carry media as `file` parts where v3
 * had `image-data` / `file-data`. Everything else troupe sends has the same shape in both,
 * which the types below check.
 */
import type {
  LanguageModelV3CallOptions,
  LanguageModelV3FilePart,
  LanguageModelV3Message,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3ToolResultPart,
  LanguageModelV4CallOptions,
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4ToolResultPart,
  SharedV4FileData,
} from '@ai-sdk/provider';

export function toV4CallOptions(v3: LanguageModelV3CallOptions): LanguageModelV4CallOptions {
  const { prompt, tools, ...rest } = v3;
  const out: LanguageModelV4CallOptions = { ...rest, prompt: prompt.map(toV4Message) };
  // troupe sends function tools only, whose shape is the same in both.
  if (tools) out.tools = tools.map((tool) => (tool.type === 'function' ? tool : unsupported(tool.type)));
  return out;
}

function toV4Message(message: LanguageModelV3Message): LanguageModelV4Message {
  switch (message.role) {
    case 'system':
      return message;
    case 'user':
      return { ...message, content: message.content.map((part) => (part.type === 'file' ? toV4File(part) : part)) };
    case 'assistant':
      return {
        ...message,
        content: message.content.map((part) => {
          if (part.type === 'file') return toV4File(part);
          if (part.type === 'tool-result') return toV4ToolResult(part);
          return part;
        }),
      };
    case 'tool':
      return { ...message, content: message.content.map((part) => (part.type === 'tool-result' ? toV4ToolResult(part) : part)) };
  }
}

function toV4File(part: LanguageModelV3FilePart): LanguageModelV4FilePart {
  return { ...part, data: fileData(part.data) };
}

function fileData(data: LanguageModelV3FilePart['data']): SharedV4FileData {
  return data instanceof URL ? { type: 'url', url: data } : { type: 'data', data };
}

function toV4ToolResult(part: LanguageModelV3ToolResultPart): LanguageModelV4ToolResultPart {
  return { ...part, output: toV4Output(part.output) };
}

function toV4Output(output: LanguageModelV3ToolResultOutput): LanguageModelV4ToolResultOutput {
  if (output.type !== 'content') return output;
  return {
    ...output,
    value: output.value.map((item) => {
      switch (item.type) {
        case 'text':
          return item;
        case 'image-data':
        case 'file-data': {
          const { type: _type, data, ...rest } = item;
          return { ...rest, type: 'file' as const, data: { type: 'data' as const, data } };
        }
        default:
          // troupe's tool results hold text, images and files only (ai-sdk-parts.ts).
          return unsupported(item.type);
      }
    }),
  };
}

function unsupported(type: string): never {
  throw new Error(`troupe does not send '${type}' parts to an AI SDK model`);
}
