import { AbstractChat, DefaultChatTransport, readUIMessageStream, type ChatInit, type ChatState, type ChatStatus, type UIMessage, type UIMessageChunk } from 'ai';
import type { TroupeServer } from '../../src/server/index.js';

/** A user message as `useChat` builds it. */
export function userMessage(text: string, id = `u_${Math.random().toString(36).slice(2)}`): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/** The AI SDK's own HTTP transport (what `useChat` uses), pointed at `POST /api/chat?protocol=ui`. */
export function transportFor(server: TroupeServer, body: Record<string, unknown> = {}, query = ''): DefaultChatTransport<UIMessage> {
  return new DefaultChatTransport({ api: `${server.url}/api/chat?protocol=ui${query}`, headers: { authorization: `Bearer ${server.token}` }, body });
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

  constructor(stream: ReadableStream<UIMessageChunk>) {
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

  static async send(transport: DefaultChatTransport<UIMessage>, messages: UIMessage[], abortSignal?: AbortSignal): Promise<UIResponse> {
    const stream = await transport.sendMessages({ chatId: 'chat-1', messages, trigger: 'submit-message', messageId: undefined, abortSignal });
    return new UIResponse(stream);
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

/** The AI SDK's framework-independent chat (what `useChat` wraps) with plain in-memory state. */
export class PlainChat extends AbstractChat<UIMessage> {
  constructor(init: Omit<ChatInit<UIMessage>, 'messages'>) {
    super({ ...init, state: new PlainChatState() });
  }
}
