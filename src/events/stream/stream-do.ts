import { DurableObject } from "cloudflare:workers";
import { revokedKeyIds } from "../../platform/api-keys.ts";
import { log } from "../../platform/log.ts";
import { MAX_STREAMS_PER_ACCOUNT, STREAM_REPLAY_MAX } from "../config.ts";
import { directoryDb } from "../../platform/shards.ts";
import { eventsAfter, type StreamFilter } from "./after.ts";

export type { StreamFilter };

/** What the socket keeps: its filter and the API key it was opened with (re-checked for revocation). */
interface Attachment extends StreamFilter {
  keyId: string;
}

/** An event ready to send: its envelope `{id, type, timestamp, data}` already serialized. */
export interface StreamEvent {
  id: string;
  type: string;
  sessionId: string | null;
  envelope: string;
}

/** The header the Worker passes the socket's account, filter and resume point in. */
export const STREAM_HEADER = "X-Event-Stream";
export interface StreamOpen extends StreamFilter {
  accountId: string;
  keyId: string;
  after: string | null;
}

/** Closed with this code when `?after=` has more than STREAM_REPLAY_MAX events behind it: reconnect with the last id received. */
export const REPLAY_TRUNCATED = 4001;
/** Closed with this code once the API key the socket was opened with is revoked. */
export const KEY_REVOKED = 4003;
/** How often, while sockets are open, their keys are checked for revocation. */
export const KEY_CHECK_MS = 60_000;

/** The envelope the webhooks deliver (`{type, timestamp, data}`), with the event id in front. */
export function envelopeOf(id: string, payload: string): string {
  return `{"id":${JSON.stringify(id)},${payload.slice(1)}`;
}

function matches(f: StreamFilter, e: { type: string; sessionId: string | null }): boolean {
  return (f.types === null || f.types.includes(e.type)) && (f.sessionId === null || f.sessionId === e.sessionId);
}

/**
 * One per account (named by the account id): holds that account's live event sockets, hibernatable
 * (`acceptWebSocket`), and sends each event published to it to the sockets whose filter matches.
 * It keeps no events itself: D1 is the record, read only to replay on `?after=`.
 */
export class EventStreamDO extends DurableObject<Env> {
  override async fetch(request: Request): Promise<Response> {
    const open = JSON.parse(request.headers.get(STREAM_HEADER) ?? "null") as StreamOpen | null;
    if (!open || request.headers.get("Upgrade")?.toLowerCase() !== "websocket") return new Response(null, { status: 400 });
    if (this.ctx.getWebSockets().length >= MAX_STREAMS_PER_ACCOUNT) return new Response(null, { status: 429 });
    const { 0: client, 1: server } = new WebSocketPair();
    const filter: StreamFilter = { types: open.types, sessionId: open.sessionId };
    this.ctx.acceptWebSocket(server, ["stream"]);
    server.serializeAttachment({ ...filter, keyId: open.keyId } satisfies Attachment);
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + KEY_CHECK_MS);
    if (open.after) this.ctx.waitUntil(this.replay(server, open.accountId, open.after, filter));
    return new Response(null, { status: 101, webSocket: client });
  }

  /** Events of the account after `after` (within retention: older rows are purged), oldest first, bounded. */
  private async replay(ws: WebSocket, accountId: string, after: string, f: StreamFilter): Promise<void> {
    try {
      const rows = await eventsAfter(this.env, accountId, after, f, STREAM_REPLAY_MAX + 1);
      for (const r of rows.slice(0, STREAM_REPLAY_MAX)) ws.send(envelopeOf(r.id, r.payload));
      if (rows.length > STREAM_REPLAY_MAX) ws.close(REPLAY_TRUNCATED, `replay truncated; resume after ${rows[STREAM_REPLAY_MAX - 1]!.id}`);
    } catch (err) {
      log.error("event stream replay failed", { accountId, error: String(err) });
      try {
        ws.close(1011, "replay failed; reconnect");
      } catch {
        /* already closed */
      }
    }
  }

  /** RPC from the events consumer: sends these events (the account's, oldest first) to matching sockets. */
  /** Whether any stream is open (publishers ask before building a batch for it). */
  async listening(): Promise<boolean> {
    return this.ctx.getWebSockets().length > 0;
  }

  async publish(batch: StreamEvent[]): Promise<number> {
    let sent = 0;
    for (const ws of this.ctx.getWebSockets()) {
      const f = ws.deserializeAttachment() as StreamFilter | null;
      if (!f) continue;
      for (const e of batch) {
        if (!matches(f, e)) continue;
        try {
          ws.send(e.envelope);
          sent++;
        } catch {
          break; // closing: the runtime drops it from getWebSockets()
        }
      }
    }
    return sent;
  }

  /** While sockets are open: closes those whose API key was revoked since they connected. */
  override async alarm(): Promise<void> {
    const sockets = this.ctx.getWebSockets();
    if (sockets.length === 0) return;
    const keyOf = (ws: WebSocket) => (ws.deserializeAttachment() as Attachment | null)?.keyId ?? "";
    const revoked = new Set(await revokedKeyIds(directoryDb(this.env), [...new Set(sockets.map(keyOf))]));
    for (const ws of sockets) {
      if (!revoked.has(keyOf(ws))) continue;
      try {
        ws.close(KEY_REVOKED, "API key revoked");
      } catch {
        /* already closed */
      }
    }
    if (sockets.some((ws) => !revoked.has(keyOf(ws)))) await this.ctx.storage.setAlarm(Date.now() + KEY_CHECK_MS);
  }

  /** Clients may send "ping" to keep intermediaries from closing an idle socket; anything else is ignored. */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (message === "ping") ws.send("pong");
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    try {
      ws.close(code === 1005 || code === 1006 ? 1000 : code, "closed");
    } catch {
      /* already closed */
    }
  }
}
