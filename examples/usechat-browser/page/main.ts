// The chat page: the AI SDK's chat client (AbstractChat from `ai`, the class `useChat` wraps in
// React) with plain DOM rendering instead of React. The transport is the AI SDK's own, pointed
// at troupe's UI message stream route; approvals are buttons that call troupe's approval route.
import { AbstractChat, DefaultChatTransport, getToolName, isToolUIPart, type ChatState, type ChatStatus, type UIMessage } from 'ai';

/** The chat's state, as useChat keeps it in React state: every change re-renders the page. */
class PageState implements ChatState<UIMessage> {
  #status: ChatStatus = 'ready';
  #messages: UIMessage[] = [];
  error: Error | undefined = undefined;
  get status() { return this.#status; }
  set status(status: ChatStatus) { this.#status = status; render(); }
  get messages() { return this.#messages; }
  set messages(messages: UIMessage[]) { this.#messages = messages; render(); }
  pushMessage = (message: UIMessage) => { this.messages = [...this.#messages, message]; };
  popMessage = () => { this.messages = this.#messages.slice(0, -1); };
  replaceMessage = (index: number, message: UIMessage) => { this.messages = this.#messages.map((m, i) => (i === index ? message : m)); };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

class Chat extends AbstractChat<UIMessage> {
  constructor() {
    // /api/* is forwarded to troupe by server.ts, which adds the bearer token.
    super({ transport: new DefaultChatTransport({ api: '/api/chat?protocol=ui', body: { agent: 'support' } }), state: new PageState() });
  }
}
// Assigned once constructed: the state re-renders from inside AbstractChat's constructor too.
let chat: Chat | undefined;
chat = new Chat();

/** The decision goes to troupe's approval route; addToolApprovalResponse only updates the page's copy. */
async function decide(approvalId: string, approved: boolean): Promise<void> {
  await chat!.addToolApprovalResponse({ id: approvalId, approved });
  const response = await fetch('/api/chat/approve', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ approvalId, decision: approved ? 'approve' : 'deny' }),
  });
  if (!response.ok) console.error(`approve: ${response.status} ${await response.text()}`);
}

function render(): void {
  const current = chat;
  if (!current) return;
  const list = document.querySelector('#messages')!;
  list.replaceChildren(
    ...current.messages.map((message) => {
      const item = element('div', { class: 'message', 'data-role': message.role });
      for (const part of message.parts) {
        if (part.type === 'text') item.append(element('p', { class: 'text' }, `${message.role === 'user' ? 'You' : 'Agent'}: ${part.text}`));
        // Tool parts are typed per tool (`tool-refund`); troupe's tool parts carry the call's input, state and output.
        if (isToolUIPart(part)) {
          const tool = element('div', { class: 'tool', 'data-state': part.state }, `${getToolName(part)} ${JSON.stringify(part.input)}: ${part.state}`);
          if (part.state === 'approval-requested') {
            const id = part.approval.id;
            tool.append(element('br'), button('Approve', () => decide(id, true)), button('Reject', () => decide(id, false)));
          }
          if (part.state === 'output-available') tool.append(element('div', { class: 'output' }, `→ ${String(part.output)}`));
          if (part.state === 'output-denied') tool.append(element('div', { class: 'output' }, '→ denied'));
          item.append(tool);
        }
      }
      return item;
    }),
  );
  document.querySelector('#status')!.textContent = current.status === 'ready' ? '' : current.status;
}

function element(tag: string, attributes: Record<string, string> = {}, text?: string): HTMLElement {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  if (text !== undefined) node.textContent = text;
  return node;
}
function button(label: string, onClick: () => void): HTMLElement {
  const node = element('button', { type: 'button' }, label);
  node.addEventListener('click', onClick, { once: true });
  return node;
}

document.querySelector('#composer')!.addEventListener('submit', (event) => {
  event.preventDefault();
  const input = document.querySelector<HTMLInputElement>('#input')!;
  void chat!.sendMessage({ text: input.value });
  input.value = '';
});
render();
