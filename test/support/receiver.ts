/**
 * A webhook receiver for tests and the benchmark (Node). Each test uses its own inbox name:
 * deliveries go to `POST /in/<inbox>`; the test configures the inbox (secrets to verify with and
 * how to answer) with `PUT /inbox/<inbox>` and reads what arrived with `GET /inbox/<inbox>`
 * (`?after=N`: only the arrivals after the first N, so a poller does not re-read the whole inbox).
 * Every delivery is verified with the reference implementation (`standardwebhooks`).
 * Written with erasable TypeScript only, so Node runs it directly.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { keepIdleConnections } from "./idle-connections.ts";

/**
 * One scripted answer: a status, `timeout` (answer after `hangMs`), `slow-body` (200 and its
 * headers at once, the body after `hangMs`), or `drop` (destroy the socket).
 */
export type Answer = number | "timeout" | "slow-body" | "drop";

export interface InboxConfig {
  /** Secrets to verify with; a delivery is `verified` when the first one verifies it. */
  secrets: string[];
  /** Answers for the first requests, in order; then `then`. */
  script?: Answer[];
  then?: Answer;
  /** Fail (500) the first request for each webhook-id with this probability (benchmark). */
  failFirstRate?: number;
  /** Retry-After header sent with non-2xx answers. */
  retryAfter?: string;
  hangMs?: number;
  /** Answer 3xx to here instead (redirect tests). */
  redirectTo?: string;
}

export interface Received {
  webhookId: string;
  timestamp: string;
  signature: string;
  body: string;
  type: string | null;
  /** Whether each configured secret verifies this delivery (same order as `secrets`). */
  verifiedBy: boolean[];
  verified: boolean;
  answered: Answer;
  receivedAt: number;
}

interface Inbox {
  config: InboxConfig;
  received: Received[];
  seenIds: Set<string>;
}

function verifies(secret: string, body: string, headers: Record<string, string>): boolean {
  try {
    new Webhook(secret).verify(body, headers);
    return true;
  } catch {
    return false;
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** `?after=N` as a non-negative whole number (anything else: 0, the whole inbox). */
function afterIndex(url: URL): number {
  const n = Number(url.searchParams.get("after") ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

export interface RunningReceiver {
  url: string;
  server: Server;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<RunningReceiver> {
  const inboxes = new Map<string, Inbox>();
  const inbox = (name: string): Inbox => {
    let box = inboxes.get(name);
    if (!box) {
      box = { config: { secrets: [] }, received: [], seenIds: new Set() };
      inboxes.set(name, box);
    }
    return box;
  };

  const server = createServer(async (req, res) => {
    // When the request reached us, before its body is read (rate measurements: a busy receiver reads bodies late).
    const arrivedAt = Date.now();
    try {
      const url = new URL(req.url ?? "/", "http://receiver");
      const [, area, name] = url.pathname.split("/");
      if (!name) return json(res, 404, { error: "no inbox" });
      const body = await readBody(req);

      if (area === "inbox" && req.method === "PUT") {
        const box = inbox(name);
        box.config = JSON.parse(body) as InboxConfig;
        return json(res, 200, { ok: true });
      }
      if (area === "inbox" && req.method === "GET") return json(res, 200, inbox(name).received.slice(afterIndex(url)));
      if (area === "inbox" && req.method === "DELETE") {
        inboxes.delete(name);
        return json(res, 200, { ok: true });
      }
      // Verify arbitrary input (tests tamper with a recorded delivery and ask).
      if (area === "verify" && req.method === "POST") {
        const { secret, body: payload, headers } = JSON.parse(body) as { secret: string; body: string; headers: Record<string, string> };
        return json(res, 200, { ok: verifies(secret, payload, headers) });
      }
      if (area !== "in" || req.method !== "POST") return json(res, 404, { error: "unknown route" });

      const box = inbox(name);
      const headers = {
        "webhook-id": String(req.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(req.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(req.headers["webhook-signature"] ?? ""),
      };
      const verifiedBy = box.config.secrets.map((s) => verifies(s, body, headers));
      const cfg = box.config;
      const index = box.received.length;
      let answer: Answer = cfg.script?.[index] ?? cfg.then ?? 200;
      if (cfg.failFirstRate && !box.seenIds.has(headers["webhook-id"]) && Math.random() < cfg.failFirstRate) answer = 500;
      box.seenIds.add(headers["webhook-id"]);
      let type: string | null = null;
      try {
        type = (JSON.parse(body) as { type?: string }).type ?? null;
      } catch {}
      box.received.push({
        webhookId: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        signature: headers["webhook-signature"],
        body,
        type,
        verifiedBy,
        verified: verifiedBy[0] === true,
        answered: answer,
        receivedAt: arrivedAt,
      });

      if (answer === "drop") return req.socket.destroy();
      if (answer === "slow-body") {
        res.writeHead(200, { "content-type": "text/plain" });
        res.flushHeaders();
        await new Promise((r) => setTimeout(r, cfg.hangMs ?? 5_000));
        return void res.end("ok");
      }
      if (answer === "timeout") await new Promise((r) => setTimeout(r, cfg.hangMs ?? 5_000));
      const status = answer === "timeout" ? 200 : answer;
      const extra: Record<string, string> = {};
      if (status >= 300 && status < 400 && cfg.redirectTo) extra.location = cfg.redirectTo;
      if ((status < 200 || status >= 300) && cfg.retryAfter) extra["retry-after"] = cfg.retryAfter;
      res.writeHead(status, { "content-type": "text/plain", ...extra });
      res.end(status >= 200 && status < 300 ? "ok" : `answer ${status}`);
    } catch (err) {
      if (!res.headersSent) json(res, 500, { error: String(err) });
    }
  });
  keepIdleConnections(server);
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  const { port: bound } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${bound}`,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A loopback port with nothing listening (the "receiver is down" case). */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}
