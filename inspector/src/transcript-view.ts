import type { ReplayItem } from '../../src/inspect/replay.js';
import type { RunTranscript, ToolCallItem, TranscriptItem } from '../../src/inspect/transcript.js';
import { clickable, pretty } from './details.js';
import { h } from './dom.js';

/** What the page adds: a call's approval records, and one reply's own tokens (from the usage summary). */
export interface TranscriptExtras {
  call(call: ToolCallItem): Record<string, unknown>;
  usage(runId: string, turn: number): { inputTokens: number; outputTokens: number; totalTokens: number } | undefined;
}

const SOURCE: Record<string, string> = { input: 'user', steer: 'steered', follow_up: 'follow-up', mailbox: 'mailbox', hook: 'hook', repair: 'repair', system: 'system' };

/**
 * The transcript of a run tree: system prompt, user input, assistant text and reasoning (as
 * they stream), tool calls with raw arguments, the result the model saw and the raw value,
 * failed attempts and progress, handoffs, injected messages; sub-runs nested and collapsible.
 */
export function renderTranscript(run: RunTranscript, system: (agent: string) => string | undefined, extras: TranscriptExtras, limit = Infinity): HTMLElement {
  const list = h('ol', { class: 'transcript', 'data-run-id': run.runId });
  const prompt = system(run.agent);
  if (prompt) list.append(item('t-system', `system · ${run.agent}`, h('div', { class: 't-text' }, prompt)));
  // Long runs draw their newest items; the rest is one click away (keeps each update batch short).
  const hidden = Math.max(0, run.items.length - limit);
  if (hidden > 0) {
    const more = h('button', { type: 'button', class: 't-more' }, `show ${hidden} earlier items`);
    more.addEventListener('click', (event) => {
      event.stopPropagation();
      list.dispatchEvent(new CustomEvent('transcript-more', { bubbles: true }));
    });
    list.append(h('li', { class: 't-item t-hidden' }, more));
  }
  for (const entry of run.items.slice(hidden)) list.append(renderItem(entry, run.runId, system, extras, limit));
  return list;
}

function item(cls: string, label: string, ...body: Array<Node | string | undefined>): HTMLLIElement {
  return h('li', { class: `t-item ${cls}` }, h('div', { class: 't-label' }, label), ...body);
}

function renderItem(entry: TranscriptItem, runId: string, system: (agent: string) => string | undefined, extras: TranscriptExtras, limit: number): HTMLLIElement {
  switch (entry.kind) {
    case 'user': {
      const li = item(`t-user${entry.source !== 'input' ? ' t-injected' : ''}`, SOURCE[entry.source] ?? entry.source, h('div', { class: 't-text' }, entry.text));
      clickable(li, 'message', `${SOURCE[entry.source] ?? entry.source} message`, () => entry);
      return li;
    }
    case 'assistant': {
      const own = entry.streaming ? undefined : extras.usage(runId, entry.turn);
      const usage = own ? h('span', { class: 't-usage' }, `${own.inputTokens} in · ${own.outputTokens} out · ${own.totalTokens} tokens`) : undefined;
      const li = h(
        'li',
        { class: `t-item t-assistant${entry.streaming ? ' streaming' : ''}${entry.discarded ? ' discarded' : ''}`, 'data-agent': entry.agent, 'data-turn': entry.turn },
        h('div', { class: 't-label' }, `${entry.agent} · turn ${entry.turn}`, entry.streaming ? h('span', { class: 't-streaming' }, ' streaming…') : undefined, usage),
        entry.reasoning ? details('t-reasoning', 'reasoning', h('div', { class: 't-text' }, entry.reasoning), true) : undefined,
        entry.text ? h('div', { class: 't-text' }, entry.text) : undefined,
        entry.discarded ? h('div', { class: 't-note' }, `discarded: ${entry.discarded}`) : undefined,
      );
      clickable(li, 'message', `${entry.agent}, turn ${entry.turn}`, () => ({ ...entry, usage: extras.usage(runId, entry.turn) }));
      return li;
    }
    case 'tool':
      return renderCall(entry, system, extras, limit);
    case 'handoff':
      return item('t-handoff', 'handoff', h('div', { class: 't-text' }, `⇄ ${entry.from} → ${entry.to}`));
    case 'human':
      return item('t-human', 'asks a person', h('div', { class: 't-text' }, entry.question), entry.answer !== undefined ? h('div', { class: 't-text' }, `answer: ${pretty(entry.answer)}`) : undefined);
    case 'end': {
      const li = item(
        `t-end ${entry.status}`,
        `run ${entry.status}`,
        entry.output !== undefined ? h('div', { class: 't-text t-output-final' }, entry.output) : undefined,
        entry.error ? h('div', { class: 't-text t-error' }, `${entry.error.name}: ${entry.error.message}`) : undefined,
      );
      clickable(li, 'end', `run ${entry.status}`, () => entry);
      return li;
    }
  }
}

function renderCall(call: ToolCallItem, system: (agent: string) => string | undefined, extras: TranscriptExtras, limit: number): HTMLLIElement {
  const li = h(
    'li',
    { class: `t-item t-tool ${call.status}`, 'data-call-id': call.callId, 'data-run-id': call.runId, 'data-status': call.status },
    h('div', { class: 't-label' }, h('strong', {}, call.tool), ` · ${call.callId} · `, h('span', { class: `status ${call.status}` }, call.status.replace('_', ' '))),
    h('div', { class: 't-field' }, h('span', { class: 't-key' }, 'arguments'), h('code', { class: 't-args' }, call.rawArgs)),
  );
  // A resolved call: which tool actually ran, with what (the label names the tool the model called).
  if (call.ran) li.append(h('div', { class: 't-field t-resolved' }, h('span', { class: 't-key' }, `resolved to ${call.ran.name}`), h('code', { class: 't-args' }, call.ran.arguments)));
  for (const failure of call.failures) {
    li.append(h('div', { class: 't-field t-failure' }, h('span', { class: 't-key' }, `attempt ${failure.attempt} failed`), h('code', {}, `${failure.error.name}: ${failure.error.message}${failure.willRetry ? ' (retried)' : ''}`)));
  }
  if (call.progress.length > 0) li.append(h('div', { class: 't-field' }, h('span', { class: 't-key' }, 'progress'), h('code', { class: 't-progress' }, call.progress.map((p) => JSON.stringify(p)).join('\n'))));
  if (call.output !== undefined) li.append(h('div', { class: 't-field' }, h('span', { class: 't-key' }, 'model saw'), h('pre', { class: 't-output' }, call.output)));
  if (call.result !== undefined && call.result !== null) li.append(h('div', { class: 't-field' }, h('span', { class: 't-key' }, 'raw result'), h('pre', { class: 't-result' }, pretty(call.result))));
  if (call.subRun) {
    const nested = renderTranscript(call.subRun, system, extras, limit);
    li.append(details('t-subrun', `sub-run ${call.subRun.runId} · ${call.subRun.agent} · ${call.subRun.status}`, nested, true));
  }
  clickable(li, 'call', `${call.tool} ${call.callId}`, () => ({ ...call, subRun: call.subRun ? { runId: call.subRun.runId, agent: call.subRun.agent, status: call.subRun.status } : undefined, ...extras.call(call) }));
  return li;
}

function details(cls: string, summary: string, body: Node, open: boolean): HTMLDetailsElement {
  const el = h('details', { class: cls, ...(open ? { open: true } : {}) }, h('summary', {}, summary), body);
  // Toggling must not open the parent item's details.
  el.querySelector('summary')!.addEventListener('click', (event) => event.stopPropagation());
  return el;
}

/** Replay items: one per stored log entry; kinds this page does not know are shown as their JSON. */
export function renderReplayItems(items: readonly ReplayItem[]): HTMLElement {
  const list = h('ol', { class: 'transcript replay-items' });
  for (const entry of items) {
    let li: HTMLLIElement;
    switch (entry.kind) {
      case 'input':
        li = item('t-user', entry.role === 'user' ? 'user' : entry.role, h('div', { class: 't-text' }, entry.text));
        break;
      case 'reply':
        li = item(
          't-assistant',
          `${entry.agent} · turn ${entry.turn}`,
          entry.reasoning ? h('div', { class: 't-text t-reasoning-text' }, entry.reasoning) : undefined,
          entry.text ? h('div', { class: 't-text' }, entry.text) : undefined,
          ...entry.calls.map((c) => h('div', { class: 't-field' }, h('span', { class: 't-key' }, `${c.name} · ${c.id}`), h('code', { class: 't-args' }, c.arguments))),
        );
        break;
      case 'result':
        // A resolved call: the model called `tool`, `ran` is the tool that actually ran (with its arguments).
        li = item(
          `t-tool ${entry.isError ? 'error' : 'done'}`,
          entry.ran ? `${entry.tool} → ${entry.ran.name} · ${entry.callId} · result` : `${entry.tool} · ${entry.callId} · result`,
          entry.ran ? h('div', { class: 't-field' }, h('span', { class: 't-key' }, `ran ${entry.ran.name}`), h('code', { class: 't-args' }, entry.ran.arguments)) : undefined,
          h('pre', { class: 't-output' }, entry.content),
        );
        break;
      case 'turn_end':
        li = item('t-turn-end', `turn ${entry.turn} ended`);
        break;
      default:
        li = item('t-other', `log entry '${entry.entryKind}'`, h('pre', { class: 't-result' }, pretty(entry.payload)));
    }
    li.dataset.index = String(entry.index);
    li.dataset.kind = entry.kind;
    clickable(li, 'entry', `log entry ${entry.index + 1}: ${entry.kind}`, () => entry);
    list.append(li);
  }
  return list;
}
