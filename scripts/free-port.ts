// A TCP port on 127.0.0.1 that nothing listens on right now (the OS picks it), for servers
// that tests and benchmarks start.
import { createServer } from "node:net";

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => res(port));
    });
  });
}
