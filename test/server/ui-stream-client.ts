import type { AbstractChat, ChatInit, ChatState, ChatStatus, DefaultChatTransport, UIMessage, UIMessageChunk } from 'ai';
import type { ServerAddress } from './helpers.js';

/** The `ai` package's module (types of `ai` 6; `ai` 7's client API used here has the same shape). */
export type AiModule = typeof import('ai');

/**
 * The AI SDK client packages the UI message stream is tested with: `ai` 6 and `ai` 7
 * (installed under the npm alias `ai-7`). `ai` 7 needs Node >= 22: on an older Node its tests
 * are skipped with that reason, and `.ci/run` runs the suite again on Node 24.
 */
export interface AiPackage {
  readonly label: string;
  readonly skip: string | undefined;
  load(): Promise<AiModule>;
}

const nodeMajor = Number(process.versions.node.split('.')[0]);

export const AI_PACKAGES: readonly AiPackage[] = [
  { label: 'ai 6', skip: undefined, load: () => import('ai') },
  {
    label: 'ai 7',
    skip: nodeMajor < 22 ? `ai 7 needs Node >= 22, this is Node ${process.versions.node}; .ci/run runs it on Node 24` : undefined,
    load: async () => (await import('ai-7')) as unknown as AiModule,
  },
];

/** A describe title that says when and why the block is skipped. */
export function aiTitle(pkg: AiPackage, what: string): string {
  return pkg.skip ? `${what}, ${pkg.label} (skipped: ${pkg.skip})` : `${what}, ${pkg.label}`;
}

/** The client side of one `ai` package: its transport, its response reader and its chat. */
export interface UIClient {
  transportFor(server: ServerAddress, body?: Record<string, unknown>, query?: string): DefaultChatTransport<UIMessage>;
  send(transport: DefaultChatTransport<UIMessage>, messages: UIMessage[], abortSignal?: AbortSignal): Promise<UIResponse>;
  /** The run's UI message stream from `GET /api/runs/:id/stream?protocol=ui`, read by the AI SDK transport's `reconnectToStream` (what `useChat`'s `resume` calls). */
  reconnect(server: ServerAddress, runId: string): Promise<UIResponse>;
  /** The AI SDK's framework-independent chat (what `useChat` wraps) with plain in-memory state. */
  readonly PlainChat: new (init: Omit<ChatInit<UIMessage>, 'messages'>) => AbstractChat<UIMessage>;
}

export function uiClient(ai: AiModule): UIClient {
  class PlainChat extends ai.AbstractChat<UIMessage> {
    constructor(init: Omit<ChatInit<UIMessage>, 'messages'>) {
      super({ ...init, state: new PlainChatState() });
    }
  }
  return {
    // The AI SDK's own HTTP transport (what `useChat` uses), pointed at `POST /api/chat?protocol=ui`.
    transportFor: (server, body = {}, query = '') =>
      new ai.DefaultChatTransport({ api: `${server.url}/api/chat?protocol=ui${query}`, headers: { authorization: `Bearer ${server.token}` }, body }),
    send: async (transport, messages, abortSignal) => {
      const stream = await transport.sendMessages({ chatId: 'chat-1', messages, trigger: 'submit-message', messageId: undefined, abortSignal });
      return new UIResponse(stream, ai.readUIMessageStream);
    },
    reconnect: async (server, runId) => {
      const headers = { authorization: `Bearer ${server.token}` };
      const transport = new ai.DefaultChatTransport<UIMessage>({ api: `${server.url}/api/chat?protocol=ui`, headers, prepareReconnectToStreamRequest: () => ({ api: `${server.url}/api/runs/${encodeURIComponent(runId)}/stream?protocol=ui`, headers }) });
      const stream = await transport.reconnectToStream({ chatId: runId });
      if (!stream) throw new Error(`no UI message stream for run ${runId}`);
      return new UIResponse(stream, ai.readUIMessageStream);
    },
    PlainChat,
  };
}

/** A user message as `useChat` builds it. */
export function userMessage(text: string, id = `u_${Math.random().toString(36).slice(2)}`): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/**
 * One response read by the AI SDK client: the chunks as `DefaultChatTransport` parsed and
 * validated them (`uiMessageChunkSchema`), and the assistant message `readUIMessageStream`
 * builds from them, updated live.
 */
export class UIResponse {
  readonly chunks: UIMessageChunk[] = [];
  readonly errors: Error[] = [];
  message: UIMessage | undefined;
  readonly done: Promise<void>;
  private waiters: Array<() => void> = [];

  constructor(stream: ReadableStream<UIMessageChunk>, readUIMessageStream: AiModule['readUIMessageStream']) {
    const [forChunks, forMessage] = stream.tee();
    const chunks = (async () => {
      for await (const chunk of forChunks as unknown as AsyncIterable<UIMessageChunk>) {
        this.chunks.push(chunk);
        this.wake();
      }
    })();
    const messages = (async () => {
      for await (const message of readUIMessageStream({ stream: forMessage, onError: (error) => this.errors.push(error as Error) })) {
        this.message = message;
        this.wake();
      }
    })();
    this.done = Promise.all([chunks, messages]).then(() => this.wake());
  }

  get types(): string[] {
    return this.chunks.map((chunk) => chunk.type);
  }

  /** Waits until `predicate` holds over the message so far. */
  async until(predicate: (message: UIMessage | undefined) => boolean, timeoutMs = 5_000): Promise<UIMessage> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.message)) {
      if (Date.now() > deadline) throw new Error(`timed out; chunks so far: ${this.types.join(', ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.message!;
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

/** The tool parts of a message (static `tool-<name>` parts). */
export function toolParts(message: UIMessage | undefined): Array<Record<string, any>> {
  return (message?.parts ?? []).filter((part) => part.type.startsWith('tool-')) as Array<Record<string, any>>;
}

export function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

class PlainChatState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage): void => void (this.messages = [...this.messages, message]);
  popMessage = (): void => void (this.messages = this.messages.slice(0, -1));
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = this.messages.slice();
    this.messages[index] = message;
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}
