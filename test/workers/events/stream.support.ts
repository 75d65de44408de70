import { api } from "../helpers.ts";

export interface Envelope {
  id: string;
  type: string;
  timestamp: string;
  /** The session's sequence, on events of a session. */
  sequence?: number;
  data: Record<string, unknown>;
}

export interface Stream {
  res: Response;
  ws: WebSocket;
  received: Envelope[];
  /** The first received envelope matching `pred`, waiting up to `timeoutMs`. */
  next(pred: (e: Envelope) => boolean, timeoutMs?: number): Promise<Envelope>;
  closed: Promise<{ code: number; reason: string }>;
  /** Sends `ping`; resolves with the server's `pong` (never, if none comes). */
  ping(): Promise<string>;
}

/** Opens GET /api/events/stream as a WebSocket client (with a ticket in `query`, or a key header). */
export async function openStream(query: string, init: { key?: string; ip?: string } = {}): Promise<Stream> {
  const res = await api(`/api/events/stream${query}`, { headers: { Upgrade: "websocket" }, ...init });
  if (res.status !== 101 || !res.webSocket) throw new Error(`stream not opened: ${res.status} ${await res.text()}`);
  const ws = res.webSocket;
  const received: Envelope[] = [];
  const waiters: (() => void)[] = [];
  const pongs: ((data: string) => void)[] = [];
  let onClose!: (v: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((r) => (onClose = r));
  ws.addEventListener("message", (m) => {
    if (m.data === "pong") {
      for (const p of pongs.splice(0)) p(m.data);
      return;
    }
    received.push(JSON.parse(m.data as string) as Envelope);
    for (const w of waiters.splice(0)) w();
  });
  ws.addEventListener("close", (e) => onClose({ code: e.code, reason: e.reason }));
  ws.accept();
  const next = async (pred: (e: Envelope) => boolean, timeoutMs = 10_000) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const hit = received.find(pred);
      if (hit) return hit;
      const left = end - Date.now();
      if (left <= 0) throw new Error(`no matching event within ${timeoutMs} ms; got ${received.map((e) => e.type).join(",")}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, left);
        waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  };
  const ping = () => {
    const pong = new Promise<string>((r) => pongs.push(r));
    ws.send("ping");
    return pong;
  };
  return { res, ws, received, next, closed, ping };
}

export async function ticketFor(key: string): Promise<string> {
  const res = await api("/api/events/stream/tickets", { method: "POST", key });
  if (res.status !== 201) throw new Error(`ticket: ${res.status}`);
  return ((await res.json()) as { ticket: string }).ticket;
}

export async function inbound(key: string, sessionId: string, text: string, from = "15550001111"): Promise<void> {
  const r = await api(`/api/sessions/${sessionId}/sandbox/inbound`, { method: "POST", key, json: { from, text } });
  if (r.status !== 201) throw new Error(`inbound: ${r.status} ${await r.text()}`);
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
