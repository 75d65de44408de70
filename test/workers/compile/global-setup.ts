import http from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { keepIdleConnections } from "../../support/idle-connections.ts";
import { startAll } from "../../support/setup-scope.ts";

// Node side of the compile tests: the TeX compile server of container/ run in-process on loopback
// (real TeX), and a receiver that records compile callbacks so tests can read them back.
/** The in-process start function of container/src/server.ts. */
type StartServer = (opts: { port: number; host: string; env: NodeJS.ProcessEnv }) => Promise<{ url: string; close(): Promise<void> }>;

type Received = { path: string; headers: Record<string, string>; body: string; at: number };

/**
 * POST /<anything> is recorded (answered with the status in `?status=`, default 200); GET
 * /_received?path= lists them. Also two broken compilers for the 503 tests: `/busy/compile` (the
 * server's own 503 `compiler_busy`) and `/broken/compile` (a proxy's plain-text 502).
 */
export function startReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (req.method === "GET" && url.pathname === "/_received") {
      const path = url.searchParams.get("path");
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(received.filter((r) => path === null || r.path === path)));
      return;
    }
    if (url.pathname === "/busy/compile") {
      req.resume();
      res.writeHead(503, { "content-type": "application/json", "retry-after": "7" }).end(JSON.stringify({ error: { code: "compiler_busy", message: "busy", retryAfterSeconds: 7 } }));
      return;
    }
    if (url.pathname === "/broken/compile") {
      req.resume();
      res.writeHead(502, { "content-type": "text/plain" }).end("bad gateway");
      return;
    }
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      received.push({ path: url.pathname, headers: req.headers as Record<string, string>, body, at: Date.now() });
      res.writeHead(Number(url.searchParams.get("status") ?? 200)).end();
    });
  });
  keepIdleConnections(server);
  return new Promise((ok) =>
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      ok({ url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) });
    }),
  );
}

export default function setup(project: TestProject) {
  return startAll(async (onClose) => {
    const receiver = await startReceiver();
    onClose(() => receiver.close());
    project.provide("callbackReceiverUrl", receiver.url);
    if (process.env.COMPILER_URL) {
      project.provide("compilerUrl", process.env.COMPILER_URL);
      return;
    }
    // Imported by path (not statically) so the Worker typecheck does not pull in Node-side code.
    const modulePath = resolve(import.meta.dirname, "../../../container/src/server.ts");
    const { startServer } = (await import(modulePath)) as { startServer: StartServer };
    const server = await startServer({ port: 0, host: "127.0.0.1", env: { ...process.env, POOL_SIZE: "1" } });
    onClose(() => server.close());
    project.provide("compilerUrl", server.url);
  });
}
