import { describe, expect, it } from "vitest";
import { carriedEventIds } from "../event-tap.ts";
import { api, createKey } from "../helpers.ts";
import { receivedAt, registerWebhook, waitFor } from "../webhooks/support.ts";
import { eventsOf, getMessage, json, sandboxSession, sendText, type MessageJson } from "./support.ts";

// The Session DO as the write buffer of its sends (src/messaging/sessions/write-buffer.ts): a send is
// answered from the DO's storage and reaches D1 with the session's next group commit.

type Body = { type: string; sequence?: number; statusOrdinal?: number; data: { id: string; status: string; sessionId: string } };

describe("messaging: the session's write buffer", () => {
  it("read your writes: right after each 201, history (with or without the session), chats and batch-free reads show the message as sent", async () => {
    const key = await createKey();
    const s = await sandboxSession(key.key);
    const sent = await Promise.all(Array.from({ length: 12 }, (_, i) => sendText(key.key, s.id, `+1415555${String(2000 + i)}`, `ryw ${i}`)));
    for (const m of sent) {
      expect(m.status).toBe("sent");
      // No wait: the read has the session commit first.
      expect(await getMessage(key.key, m.chatId, m.id, s.id), `history of ${m.chatId} with the session`).toMatchObject({ id: m.id, status: expect.stringMatching(/^(sent|delivered|read)$/) });
      expect(await getMessage(key.key, m.chatId, m.id), `history of ${m.chatId} across sessions`).toMatchObject({ id: m.id });
    }
    const chats = await json<{ data: { id: string; lastMessage: { id: string } | null }[] }>(await api(`/api/chats?sessionId=${s.id}&limit=100`, { key: key.key }));
    const last = new Set(chats.data.map((c) => c.lastMessage?.id));
    for (const m of sent) expect(last.has(m.id), `chat of ${m.chatId}`).toBe(true);
  });

  it("each message's events carry the session's sequence in recording order and the status ordinal; their queue messages carry the records", async () => {
    const key = await createKey();
    const s = await sandboxSession(key.key);
    const hook = await registerWebhook(key, { events: ["message.sent", "message.delivered", "message.read"], sessionId: s.id });
    const sent: MessageJson[] = [];
    for (let i = 0; i < 5; i++) sent.push(await sendText(key.key, s.id, `+1415556${String(3000 + i)}`, `seq ${i}`));
    const got = await waitFor(async () => {
      const r = (await receivedAt(hook.inbox)).filter((d) => d.verified);
      return r.length >= 15 ? r : undefined;
    }, 15_000, "15 message events");
    const bodies = got.map((d) => JSON.parse(d.body) as Body);
    const sequences = bodies.map((b) => b.sequence!);
    expect(sequences.every((n) => Number.isSafeInteger(n) && n > 0)).toBe(true);
    expect(new Set(sequences).size).toBe(15); // distinct within the session
    for (const m of sent) {
      const mine = bodies.filter((b) => b.data.id === m.id).sort((a, b) => a.sequence! - b.sequence!);
      expect(mine.map((b) => [b.type, b.statusOrdinal, b.data.status])).toEqual([
        ["message.sent", 1, "sent"],
        ["message.delivered", 2, "delivered"],
        ["message.read", 3, "read"],
      ]);
    }
    // The sends were recorded one after another: their message.sent events are numbered in that order.
    const sentSeq = sent.map((m) => bodies.find((b) => b.data.id === m.id && b.type === "message.sent")!.sequence!);
    expect([...sentSeq].sort((a, b) => a - b)).toEqual(sentSeq);
    // Fanned out from the queue message's own record: no read of the event back from D1.
    const ids = eventsOf(key.accountId).filter((e) => e.type.startsWith("message.")).map((e) => e.id);
    expect(ids.length).toBeGreaterThanOrEqual(15);
    expect(ids.filter((id) => !carriedEventIds.has(id))).toEqual([]);
  });

  it("a receipt replayed after the commit changes nothing and announces nothing (forward only, once per step)", async () => {
    const key = await createKey();
    const s = await sandboxSession(key.key);
    const m = await sendText(key.key, s.id, "+14155557001", "once");
    await waitFor(async () => (await getMessage(key.key, m.chatId, m.id, s.id))?.status === "read", 10_000, "read");
    await new Promise((r) => setTimeout(r, 500));
    const types = eventsOf(key.accountId).filter((e) => (e.data as { id?: string }).id === m.id).map((e) => e.type).sort();
    expect(types).toEqual(["message.delivered", "message.read", "message.sent"]);
    const final = (await getMessage(key.key, m.chatId, m.id, s.id))!;
    expect(Date.parse(final.readAt!)).toBeGreaterThan(Date.parse(final.deliveredAt!));
  });
});
