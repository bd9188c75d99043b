// A TCP proxy on 127.0.0.1 in front of a real server (the tests' PostgreSQL), that a test can cut
// (every connection reset, new ones dropped at once: the server "gone", as after a restart or a
// network cut) and restore. Closed after each test of the file that uses it.
import { createServer, type Server, type Socket, connect } from "node:net";
import { afterEach } from "vitest";

export interface TcpProxy {
  readonly port: number;
  /** Resets every connection through the proxy, and drops new ones until `restore`. */
  cut(): void;
  restore(): void;
  /** Connections made through the proxy so far. */
  readonly connections: number;
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
    let down = false;
    let connections = 0;
    const server = createServer((client) => {
      if (down) {
        client.destroy();
        return;
      }
      connections++;
      const upstream = connect(target.port, target.host);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on("error", () => {});
        socket.on("close", () => {
          sockets.delete(socket);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
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
