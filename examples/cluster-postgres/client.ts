// A small client of troupe's HTTP API: start a run and read its event stream (Server-Sent
// Events), decide an approval. Any server node of the cluster takes any of these calls.

export interface RunEventJson {
  readonly type: string;
  readonly [field: string]: unknown;
}

export interface RunStream {
  readonly runId: string;
  readonly events: RunEventJson[];
  /** The first event from index `from` on that satisfies `test` (waits for it to arrive). */
  next(test: (event: RunEventJson) => boolean, from?: number): Promise<RunEventJson>;
}

export class TroupeClient {
  constructor(
    private readonly url: string,
    private readonly token: string,
  ) {}

  /** POST /api/chat: enqueues the run (a worker picks it up) and streams its events. */
  async start(agent: string, input: string): Promise<RunStream> {
    const response = await fetch(`${this.url}/api/chat`, { method: 'POST', headers: this.headers(), body: JSON.stringify({ agent, input }) });
    if (!response.ok || !response.body) throw new Error(`POST /api/chat: ${response.status} ${await response.text()}`);
    const events: RunEventJson[] = [];
    const wake = new Set<() => void>();
    let ended = false;
    void (async () => {
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const data = buffer.slice(0, end).split('\n').find((line) => line.startsWith('data: '));
          buffer = buffer.slice(end + 2);
          if (data) events.push(JSON.parse(data.slice(6)) as RunEventJson);
        }
        for (const w of [...wake]) w();
      }
      ended = true;
      for (const w of [...wake]) w();
    })();
    return {
      runId: response.headers.get('x-run-id')!,
      events,
      next: (test, from = 0) =>
        new Promise((resolve, reject) => {
          const check = () => {
            const found = events.slice(from).find(test);
            if (found || ended) wake.delete(check);
            if (found) resolve(found);
            else if (ended) reject(new Error(`the stream ended without the event: ${events.map((e) => e.type).join(', ')}`));
          };
          wake.add(check);
          check();
        }),
    };
  }

  /** POST /api/chat/approve: stored for the run's worker, which applies it (202). */
  async approve(approvalId: string): Promise<void> {
    const response = await fetch(`${this.url}/api/chat/approve`, { method: 'POST', headers: this.headers(), body: JSON.stringify({ approvalId, decision: 'approve' }) });
    if (response.status !== 202) throw new Error(`approve ${approvalId}: ${response.status} ${await response.text()}`);
  }

  private headers(): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' };
  }
}
