import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy in front of PostgreSQL, so a test can drop a process's database
 * connections (`cut`: every open connection reset, new ones refused) and bring them back
 * (`restore`) while the database itself keeps running for everyone else.
 */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private down = false;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** A copy of `url` that connects through this proxy. */
  route(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  async start(): Promise<void> {
    this.server = createServer((client) => {
      if (this.down) return void client.destroy();
      const upstream = createConnection({ host: this.targetHost, port: this.targetPort });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {});
      }
      client.pipe(upstream);
      upstream.pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server!.address() as { port: number }).port;
  }

  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.down = false;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
