// A TCP proxy on 127.0.0.1 in front of a real server (the tests' PostgreSQL), that a test can cut
// (every connection reset, new ones dropped at once: the server "gone", as after a restart or a
// network cut) and restore, or hold (what the server sends is kept back, then delivered in one
// write: a client too busy to read finds the end of a query and what followed it in one read).
// Closed after each test of the file that uses it.
import { createServer, type Server, type Socket, connect } from "node:net";
import { afterEach } from "vitest";

export interface TcpProxy {
  readonly port: number;
  /** Resets every connection through the proxy, and drops new ones until `restore`. */
  cut(): void;
  restore(): void;
  /** Connections made through the proxy so far. */
  readonly connections: number;
  /**
   * Keeps back what the server sends on every connection until `release`; a connection the server
   * closes meanwhile is closed to the client only after its bytes are delivered.
   */
  hold(): void;
  /** Delivers each connection's bytes kept back, in one write, and closes those the server closed. */
  release(): void;
  /** Connections whose server side closed while held (their close not yet passed on). */
  readonly closedWhileHeld: number;
}

/** One connection through the proxy: the client's socket, the server's, and what is held back. */
interface Link {
  readonly client: Socket;
  readonly upstream: Socket;
  held: Buffer[];
  upstreamClosed: boolean;
}

export function useTcpProxies(): (target: { host: string; port: number }) => Promise<TcpProxy> {
  const servers: { server: Server; sockets: Set<Socket> }[] = [];
  afterEach(async () => {
    for (const { server, sockets } of servers.splice(0)) {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  return async (target) => {
    const sockets = new Set<Socket>();
    const links = new Set<Link>();
    let down = false;
    let holding = false;
    let connections = 0;
    const close = (link: Link): void => {
      links.delete(link);
      link.client.destroy();
      link.upstream.destroy();
    };
    const server = createServer((client) => {
      if (down) {
        client.destroy();
        return;
      }
      connections++;
      const upstream = connect(target.port, target.host);
      const link: Link = { client, upstream, held: [], upstreamClosed: false };
      links.add(link);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("error", () => {});
        socket.on("close", () => {
          sockets.delete(socket);
          if (socket === upstream && holding && client.writable) link.upstreamClosed = true;
          else close(link);
        });
      }
      client.pipe(upstream);
      upstream.on("data", (data: Buffer) => {
        if (holding) link.held.push(data);
        else client.write(data);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    servers.push({ server, sockets });
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    return {
      port: address.port,
      cut() {
        down = true;
        for (const socket of sockets) socket.destroy();
      },
      restore() {
        down = false;
      },
      get connections() {
        return connections;
      },
      hold() {
        holding = true;
      },
      release() {
        holding = false;
        for (const link of [...links]) {
          const bytes = Buffer.concat(link.held.splice(0));
          if (link.upstreamClosed) link.client.end(bytes, () => close(link));
          else if (bytes.length > 0) link.client.write(bytes);
        }
      },
      get closedWhileHeld() {
        return [...links].filter((link) => link.upstreamClosed).length;
      },
    };
  };
}

/** `url` (a postgres:// URL) through `proxy`. */
export function throughProxy(url: string, proxy: TcpProxy): string {
  const through = new URL(url);
  through.hostname = "127.0.0.1";
  through.port = String(proxy.port);
  return through.toString();
}
