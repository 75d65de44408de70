import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { KEY_REVOKED } from "../../../src/events/stream/stream-do.ts";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { getDb } from "../../../src/db/client.ts";
import { events, streamTickets } from "../../../src/db/schema/index.ts";
import { sha256Hex } from "../../../src/platform/crypto.ts";
import { MAX_STREAMS_PER_ACCOUNT } from "../../../src/events/config.ts";
import { api, createKey, errorOf, freshIp, shardDb } from "../helpers.ts";
import { sandboxSession } from "../messaging/support.ts";
import { inbound, openStream, sleep, ticketFor } from "./stream.support.ts";

describe("event stream: happy paths", () => {
  it("a ticket opens the socket; an inbound message arrives as the webhook envelope, byte for byte", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const stream = await openStream(`?ticket=${await ticketFor(k.key)}`);
    await inbound(k.key, s.id, "hello stream");
    const e = await stream.next((x) => x.type === "message.received");
    expect(e).toMatchObject({ type: "message.received", data: expect.objectContaining({ text: "hello stream", sessionId: s.id }) });
    expect(e.id).toMatch(/^evt_/);
    const row = await (await shardDb(k.accountId)).select().from(events).where(eq(events.id, e.id)).get();
    expect(row!.accountId).toBe(k.accountId);
    // Every event of a session carries the session's sequence (src/messaging/session-sequence.ts).
    expect(e.sequence).toEqual(expect.any(Number));
    expect({ type: e.type, timestamp: e.timestamp, sequence: e.sequence, data: e.data }).toEqual(JSON.parse(row!.payload));
    stream.ws.close(1000);
  });

  it("accepts an Authorization header instead of a ticket (non-browser clients) and answers ping", async () => {
    const k = await createKey("pro");
    const stream = await openStream("", { key: k.key });
    expect(await stream.ping()).toBe("pong");
    stream.ws.close(1000);
  });

  it("filters by type and session", async () => {
    const k = await createKey("pro");
    const s1 = await sandboxSession(k.key);
    const s2 = await sandboxSession(k.key);
    const filtered = await openStream(`?ticket=${await ticketFor(k.key)}&types=message.received&sessionId=${s1.id}`);
    const all = await openStream(`?ticket=${await ticketFor(k.key)}`);
    await inbound(k.key, s2.id, "to s2", "15550002222");
    await inbound(k.key, s1.id, "to s1", "15550003333");
    await all.next((x) => x.type === "message.received" && x.data.text === "to s2");
    await all.next((x) => x.type === "message.received" && x.data.text === "to s1");
    await all.next((x) => x.type === "contact.created");
    await filtered.next((x) => x.data.text === "to s1");
    await sleep(300);
    expect(filtered.received.map((e) => [e.type, e.data.text])).toEqual([["message.received", "to s1"]]);
    filtered.ws.close(1000);
    all.ws.close(1000);
  });

  it("resumes with ?after=: the events after that id are replayed, not earlier ones", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const first = await openStream(`?ticket=${await ticketFor(k.key)}&types=message.received`);
    await inbound(k.key, s.id, "one");
    const one = await first.next((x) => x.data.text === "one");
    first.ws.close(1000);
    await inbound(k.key, s.id, "two");
    await inbound(k.key, s.id, "three");
    // Both are in D1 before the reconnect (written before the inbound call answered).
    const resumed = await openStream(`?ticket=${await ticketFor(k.key)}&types=message.received&after=${one.id}`);
    await resumed.next((x) => x.data.text === "three");
    const texts = resumed.received.map((e) => e.data.text);
    expect(texts.slice(0, 2)).toEqual(["two", "three"]);
    expect(texts).not.toContain("one");
    resumed.ws.close(1000);
  });
});

describe("event stream: rate limit", () => {
  it("opening counts once against the key's limit; messages on the socket do not", async () => {
    const k = await createKey("pro");
    const stream = await openStream("", { key: k.key });
    for (let i = 0; i < 20; i++) {
      const pong = new Promise((r) => stream.ws.addEventListener("message", (m) => m.data === "pong" && r(m.data), { once: true }));
      stream.ws.send("ping");
      await pong;
    }
    const res = await api("/api/account", { key: k.key });
    expect(res.status).toBe(200);
    // Two requests so far: the connect and this one.
    expect(Number(res.headers.get("X-RateLimit-Remaining"))).toBe(Number(res.headers.get("X-RateLimit-Limit")) - 2);
    stream.ws.close(1000);
  });
});

describe("event stream: errors", () => {
  it("400 without a WebSocket upgrade, for an unknown type, for a malformed after", async () => {
    const k = await createKey("pro");
    const plain = await api("/api/events/stream", { key: k.key });
    expect(plain.status).toBe(400);
    expect((await errorOf(plain)).code).toBe("invalid_request");
    const badType = await api("/api/events/stream?types=message.received,nope", { key: k.key, headers: { Upgrade: "websocket" } });
    expect(badType.status).toBe(400);
    expect(JSON.stringify(await errorOf(badType))).toContain("nope");
    const badAfter = await api("/api/events/stream?after=1%27%20OR%201", { key: k.key, headers: { Upgrade: "websocket" } });
    expect(badAfter.status).toBe(400);
  });

  it("401 without a key or ticket", async () => {
    const res = await api("/api/events/stream", { headers: { Upgrade: "websocket" } });
    expect(res.status).toBe(401);
  });

  it(`429 too_many_streams past ${MAX_STREAMS_PER_ACCOUNT} sockets of one account`, async () => {
    const k = await createKey("enterprise");
    const open = [];
    for (let i = 0; i < MAX_STREAMS_PER_ACCOUNT; i++) open.push(await openStream("", { key: k.key }));
    const over = await api("/api/events/stream", { key: k.key, headers: { Upgrade: "websocket" } });
    expect(over.status).toBe(429);
    expect((await errorOf(over)).code).toBe("too_many_streams");
    for (const s of open) s.ws.close(1000);
  });
});

describe("event stream: security", () => {
  it("guessed tickets count against the per-IP limit of unauthenticated requests", async () => {
    const ip = freshIp();
    const statuses: number[] = [];
    for (let i = 0; i < 70; i++) {
      const res = await api(`/api/events/stream?ticket=tkt_${String(i).padStart(43, "x")}`, { ip, headers: { Upgrade: "websocket" } });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(statuses).toContain(429);
  });


  it("a ticket works once; only its hash is stored", async () => {
    const k = await createKey("pro");
    const ticket = await ticketFor(k.key);
    const rows = await getDb(env.DB).select().from(streamTickets).where(eq(streamTickets.accountId, k.accountId));
    expect(rows.map((r) => r.hash)).toEqual([await sha256Hex(ticket)]);
    expect(JSON.stringify(rows)).not.toContain(ticket);
    const s = await openStream(`?ticket=${ticket}`);
    const again = await api(`/api/events/stream?ticket=${ticket}`, { headers: { Upgrade: "websocket" } });
    expect(again.status).toBe(401);
    const err = await errorOf(again);
    expect(err.code).toBe("unauthorized");
    expect(err.message).toContain("ticket");
    s.ws.close(1000);
  });

  it("an expired ticket, a made-up one and one whose key was revoked are refused", async () => {
    const k = await createKey("pro");
    const db = getDb(env.DB);
    const expired = await ticketFor(k.key);
    await db.update(streamTickets).set({ expiresAt: Date.now() - 1 }).where(eq(streamTickets.hash, await sha256Hex(expired)));
    expect((await api(`/api/events/stream?ticket=${expired}`, { headers: { Upgrade: "websocket" } })).status).toBe(401);
    const madeUp = `tkt_${"A".repeat(43)}`;
    expect((await api(`/api/events/stream?ticket=${madeUp}`, { headers: { Upgrade: "websocket" } })).status).toBe(401);
    const k2 = await createKey("pro");
    const beforeRevoke = await ticketFor(k2.key);
    expect((await api(`/api/keys/${k2.keyId}`, { method: "DELETE", key: k2.key })).status).toBeLessThan(300);
    expect((await api(`/api/events/stream?ticket=${beforeRevoke}`, { headers: { Upgrade: "websocket" } })).status).toBe(401);
  });

  it("a socket whose key is revoked is closed (4003) at the next key check; others stay open", async () => {
    const k1 = await createKey("pro");
    const k2 = await createKey("pro", { accountId: k1.accountId });
    const keep = await openStream("", { key: k1.key });
    const doomed = await openStream(`?ticket=${await ticketFor(k2.key)}`);
    expect((await api(`/api/keys/${k2.keyId}`, { method: "DELETE", key: k1.key })).status).toBeLessThan(300);
    const stub = env.EVENT_STREAMS.get(env.EVENT_STREAMS.idFromName(k1.accountId));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await doomed.closed).code).toBe(KEY_REVOKED);
    expect(await keep.ping()).toBe("pong");
    keep.ws.close(1000);
  });

  it("another account's events are never delivered, live or on resume", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const sa = await sandboxSession(a.key);
    const streamA = await openStream(`?ticket=${await ticketFor(a.key)}`);
    await inbound(a.key, sa.id, "secret of a");
    const evA = await streamA.next((x) => x.type === "message.received");
    // B resumes from before A's event, filtered on A's session: still nothing of A's.
    const streamB = await openStream(`?ticket=${await ticketFor(b.key)}&sessionId=${sa.id}&after=evt_000000000000000000000`);
    const streamB2 = await openStream(`?ticket=${await ticketFor(b.key)}`);
    await inbound(a.key, sa.id, "more of a");
    await streamA.next((x) => x.data.text === "more of a");
    await sleep(300);
    expect(evA.id).toMatch(/^evt_/);
    expect(streamB.received).toEqual([]);
    expect(streamB2.received).toEqual([]);
    for (const s of [streamA, streamB, streamB2]) s.ws.close(1000);
  });
});
