import { describe, expect, it } from "vitest";
import { api, createKey, type TestKey } from "../helpers.ts";
import { allEvents } from "../events/log.support.ts";
import { getMessage, json, sandboxSession, sendText, waitFor } from "./support.ts";

// Every event of a session carries the session's `sequence` (src/messaging/session-sequence.ts): the
// status events the Session DO records itself, and the session, inbound, contact and other events
// recorded outside it, all numbered by the one counter in the session's write buffer.

type Logged = { id: string; type: string; sessionId: string | null; payload: { sequence?: number; statusOrdinal?: number; data: { id?: string } } };

async function sessionEvents(key: TestKey, sessionId: string): Promise<Logged[]> {
  return (await allEvents(key, `sessionId=${sessionId}&limit=50`)) as unknown as Logged[];
}

describe("messaging: every session event carries the session's sequence", () => {
  it("strictly increasing and never repeated across status, inbound, contact and session events, under concurrent sends, receipts and inbound messages", { timeout: 60_000 }, async () => {
    const key = await createKey();
    const s = await sandboxSession(key.key);
    const N = 15;
    // Sends, their sandbox receipts and inbound messages (each a new contact) all at once.
    const [sent] = await Promise.all([
      Promise.all(Array.from({ length: N }, (_, i) => sendText(key.key, s.id, `+1415557${String(4000 + i)}`, `seq ${i}`))),
      Promise.all(Array.from({ length: N }, (_, i) => api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: key.key, json: { from: `+1555123${String(1000 + i)}`, text: `in ${i}` } }))),
    ]);
    for (const m of sent) await waitFor(async () => (await getMessage(key.key, m.chatId, m.id, s.id))?.status === "read", 20_000, "read");
    const expected = 1 + 3 * N + 2 * N; // session.connected; sent, delivered, read; received and contact.created
    const events = await waitFor(async () => {
      const got = await sessionEvents(key, s.id);
      return got.length >= expected ? got : undefined;
    }, 20_000, `${expected} session events`);

    const counts = new Map<string, number>();
    for (const e of events) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
    expect(Object.fromEntries(counts)).toMatchObject({ "session.connected": 1, "message.sent": N, "message.delivered": N, "message.read": N, "message.received": N, "contact.created": N });
    const seq = events.map((e) => e.payload.sequence);
    expect(seq.every((n) => Number.isSafeInteger(n) && n! > 0), JSON.stringify(events.filter((e) => !Number.isSafeInteger(e.payload.sequence)).map((e) => e.type))).toBe(true);
    expect(new Set(seq).size).toBe(events.length); // never repeated within the session
    const connected = events.find((e) => e.type === "session.connected")!;
    expect(Math.min(...seq.map(Number))).toBe(connected.payload.sequence);
    // Each message's steps are numbered in the order they happened.
    for (const m of sent) {
      const mine = events.filter((e) => e.payload.data.id === m.id).sort((a, b) => a.payload.sequence! - b.payload.sequence!);
      expect(mine.map((e) => e.type)).toEqual(["message.sent", "message.delivered", "message.read"]);
    }
  });
});
