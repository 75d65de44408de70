import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { allEvents } from "../events/log.support.ts";
import { json, sandboxSession, waitFor } from "./support.ts";

// Inbound messages arriving at a session while others are being recorded are recorded together
// (sessions/coalesce.ts, sessions/inbound.ts): one D1 round trip for many, each still deduplicated,
// its sender made a contact once, its events recorded only if its row was, contact first.

type Logged = { type: string; payload: { sequence?: number; data: { id?: string; phone?: string; chatId?: string } } };
type Msg = { id: string; chatId: string; text: string | null };

describe("messaging: concurrent inbound messages of one session", () => {
  it("each stored once and announced once; one contact per new sender, announced before its messages; a STOP among them opts out", { timeout: 60_000 }, async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const inbound = (from: string, text: string) => api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: k.key, json: { from, text } });
    // A is known before the burst; B and C are new in it, each with several messages at once.
    expect((await inbound("+15550002001", "earlier")).status).toBe(201);
    const senders = ["+15550002001", "+15550002002", "+15550002003"];
    const sends = Array.from({ length: 24 }, (_, i) => ({ from: senders[i % 3]!, text: i === 5 ? "STOP" : `burst ${i}` }));
    const answers = await Promise.all(sends.map((m) => inbound(m.from, m.text)));
    expect(answers.map((r) => r.status)).toEqual(sends.map(() => 201));
    const stored = await Promise.all(answers.map((r) => json<Msg>(r)));
    expect(new Set(stored.map((m) => m.id)).size).toBe(24);
    expect(stored.map((m) => m.text)).toEqual(sends.map((m) => m.text));

    for (const [i, phone] of senders.entries()) {
      const found = await json<{ data: { phone: string; optedOut: boolean }[] }>(await api(`/api/contacts?q=${phone.slice(1)}`, { key: k.key }));
      expect(found.data).toEqual([expect.objectContaining({ phone, optedOut: i === 2 })]);
      const history = await json<{ data: Msg[] }>(await api(`/api/messages/${phone.slice(1)}@c.us?sessionId=${s.id}&limit=50`, { key: k.key }));
      expect(history.data).toHaveLength(i === 0 ? 9 : 8);
    }

    const events = await waitFor(async () => {
      const got = (await allEvents(k, `sessionId=${s.id}&limit=50`)) as unknown as Logged[];
      return got.filter((e) => e.type === "message.received").length >= 25 ? got : undefined;
    }, 20_000, "25 message.received");
    const received = events.filter((e) => e.type === "message.received");
    expect(received.map((e) => e.payload.data.id)).toEqual(expect.arrayContaining(stored.map((m) => m.id)));
    expect(new Set(received.map((e) => e.payload.data.id)).size).toBe(25);
    const created = events.filter((e) => e.type === "contact.created");
    expect(created.map((e) => e.payload.data.phone).sort()).toEqual(senders);
    for (const phone of senders.slice(1)) {
      const contactSeq = created.find((e) => e.payload.data.phone === phone)!.payload.sequence!;
      const theirs = received.filter((e) => e.payload.data.chatId === `${phone.slice(1)}@c.us`).map((e) => e.payload.sequence!);
      expect(theirs).toHaveLength(8);
      expect(contactSeq).toBeLessThan(Math.min(...theirs));
    }
  });
});
