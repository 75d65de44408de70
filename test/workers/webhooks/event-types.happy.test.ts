import { describe, expect, it } from "vitest";
import { api } from "./support.ts";
import { getMessage, json, sandboxSession, type MessageJson, type SessionJson } from "../messaging/support.ts";
import { about, arrival, arrivalWhere, delivered, expectExactlyOnce, fixture, receiptDelays, settle, targets, twoAccounts } from "./event-types.support.ts";

// Every event type of docs/contracts.md §4 (but campaign.completed, covered with campaigns) produced by the
// operation that should produce it, delivered once to each matching webhook and to no other, with
// `data` the resource as the REST API shows it at that moment.

interface ContactJson {
  id: string;
  phone: string;
  chatId: string;
  [k: string]: unknown;
}

describe("webhooks: every event type from the operation that produces it", () => {
  it("session.connected: POST /api/sessions", async () => {
    const { a, b } = await twoAccounts();
    const f = await fixture(a, b, ["session.connected"]);
    const s = await sandboxSession(a.key);
    await arrival(f.typed, "session.connected", s.id);
    await settle();
    const got = await expectExactlyOnce(...targets(f), "session.connected", s.id);
    expect(got.data).toEqual(s);
    expect(got.data).toEqual(await json<SessionJson>(await api(`/api/sessions/${s.id}`, { key: a.key })));
    expect(got.data.status).toBe("WORKING");
  });

  it("session.disconnected then session.connected: POST /api/sessions/:id/restart; session filters apply", async () => {
    const { a, b } = await twoAccounts();
    const s = await sandboxSession(a.key);
    const other = await sandboxSession(a.key);
    const f = await fixture(a, b, ["session.disconnected"], { same: s.id, other: other.id });
    const res = await api(`/api/sessions/${s.id}/restart`, { method: "POST", key: a.key });
    expect(res.status).toBe(200);
    const after = await json<SessionJson>(res);
    expect(after.status).toBe("WORKING");
    await arrival(f.typed, "session.disconnected", s.id);
    await arrival(f.all, "session.connected", s.id);
    await settle();
    const down = await expectExactlyOnce(...targets(f), "session.disconnected", s.id);
    // The session as it was when it left WORKING: reconnecting, then WORKING again.
    const { updatedAt: _u, ...rest } = after;
    expect(down.data).toMatchObject({ ...rest, status: "STARTING", statusReason: null });
    const up = await expectExactlyOnce(...targets(f, false), "session.connected", s.id);
    expect(up.data).toEqual(after);
    expect(up.data).toEqual(await json<SessionJson>(await api(`/api/sessions/${s.id}`, { key: a.key })));
  });

  it("session.disconnected: DELETE /api/sessions/:id", async () => {
    const { a, b } = await twoAccounts();
    const s = await sandboxSession(a.key);
    const f = await fixture(a, b, ["session.disconnected"], { same: s.id, other: "ses_someother" });
    const res = await api(`/api/sessions/${s.id}`, { method: "DELETE", key: a.key });
    expect(res.status).toBe(200);
    const stopped = await json<SessionJson>(res);
    expect(stopped.status).toBe("STOPPED");
    await arrival(f.typed, "session.disconnected", s.id);
    await settle();
    const got = await expectExactlyOnce(...targets(f), "session.disconnected", s.id);
    expect(got.data).toEqual(stopped);
    expect(got.data).toEqual(await json<SessionJson>(await api(`/api/sessions/${s.id}`, { key: a.key })));
  });

  it("message.sent, message.delivered, message.read: a sandbox send, receipts after SANDBOX_DELIVERED_MS / SANDBOX_READ_MS", async () => {
    const { a, b } = await twoAccounts();
    const s = await sandboxSession(a.key);
    const other = await sandboxSession(a.key);
    const f = await fixture(a, b, ["message.sent", "message.delivered", "message.read"], { same: s.id, other: other.id });
    const sentAt = Date.now();
    const res = await api("/api/messages/send", { method: "POST", key: a.key, json: { sessionId: s.id, to: "+14155550199", text: "hello events" } });
    expect(res.status).toBe(201);
    const m = await json<MessageJson>(res);
    expect(m.status).toBe("sent");
    const readDelivery = await arrival(f.typed, "message.read", m.id);
    await settle();
    const [matching, notMatching] = targets(f);
    const sent = await expectExactlyOnce(matching, notMatching, "message.sent", m.id);
    const delivered = await expectExactlyOnce(matching, notMatching, "message.delivered", m.id);
    const read = await expectExactlyOnce(matching, notMatching, "message.read", m.id);
    expect(read.webhookId).toBe(readDelivery.webhookId);

    // Each carries the message as the API showed it at that step: sent = the send's answer,
    // read = the final record, delivered = the final record before it was read.
    const final = (await getMessage(a.key, m.chatId, m.id, s.id))!;
    expect(final.status).toBe("read");
    expect(sent.data).toEqual(m);
    expect(read.data).toEqual(final);
    expect(delivered.data).toEqual({ ...final, status: "delivered", readAt: null });
    const { delivered: deliveredMs, read: readMs } = receiptDelays();
    expect(Date.parse(final.deliveredAt!) - Date.parse(final.sentAt!)).toBeGreaterThanOrEqual(deliveredMs);
    expect(Date.parse(final.readAt!) - Date.parse(final.sentAt!)).toBeGreaterThanOrEqual(readMs);
    expect(Date.parse(final.readAt!)).toBeGreaterThan(Date.parse(final.deliveredAt!));
    // And the receivers learnt them in that order, no earlier than the network's delays.
    expect(delivered.receivedAt).toBeGreaterThanOrEqual(sentAt + deliveredMs);
    expect(read.receivedAt).toBeGreaterThanOrEqual(sentAt + readMs);
    expect(Date.parse(sent.timestamp)).toBeLessThanOrEqual(Date.parse(delivered.timestamp));
    expect(Date.parse(delivered.timestamp)).toBeLessThanOrEqual(Date.parse(read.timestamp));
  });

  it("a send to a 999 number fails: no message.sent, message.delivered or message.read", async () => {
    const { a, b } = await twoAccounts();
    const s = await sandboxSession(a.key);
    const f = await fixture(a, b, ["message.sent", "message.delivered", "message.read"], { same: s.id });
    const bad = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: a.key, json: { sessionId: s.id, to: "+9991234567", text: "nobody" } }));
    expect(bad).toMatchObject({ status: "failed", error: { code: "no_account" } });
    // A good send after it, as the marker that the pipeline has caught up.
    const good = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: a.key, json: { sessionId: s.id, to: "+14155550100", text: "somebody" } }));
    await arrival(f.typed, "message.read", good.id);
    await settle(receiptDelays().read + 1_000);
    for (const hook of Object.values(f)) {
      if (!hook) continue;
      for (const type of ["message.sent", "message.delivered", "message.read"]) {
        expect(await about(hook, type, bad.id), `${type} for the failed message at ${hook.inbox}`).toEqual([]);
      }
    }
    expect((await getMessage(a.key, bad.chatId, bad.id))?.status).toBe("failed");
  });

  it("message.received and contact.created: POST /api/sessions/:id/sandbox/inbound from an unknown number", async () => {
    const { a, b } = await twoAccounts();
    const s = await sandboxSession(a.key);
    const other = await sandboxSession(a.key);
    const f = await fixture(a, b, ["message.received", "contact.created"], { same: s.id, other: other.id });
    const res = await api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: a.key, json: { from: "+15557770001", text: "hi from outside" } });
    expect(res.status).toBe(201);
    const m = await json<MessageJson>(res);
    await arrival(f.typed, "message.received", m.id);
    const contactEvent = await arrivalWhere(f.typed, "contact.created", (d) => d.data.phone === "+15557770001");
    await settle();
    const [matching, notMatching] = targets(f);
    const received = await expectExactlyOnce(matching, notMatching, "message.received", m.id);
    expect(received.data).toEqual(m);
    expect(received.data).toEqual(await getMessage(a.key, "15557770001@c.us", m.id, s.id));
    expect(received.data).toMatchObject({ direction: "inbound", status: "received", sessionId: s.id, chatId: "15557770001@c.us", text: "hi from outside" });
    // The contact was created by the inbound on this session: session filters see it too.
    const contact = await expectExactlyOnce(matching, notMatching, "contact.created", contactEvent.data.id);
    expect(contact.data).toEqual(await json<ContactJson>(await api(`/api/contacts/${contactEvent.data.id}`, { key: a.key })));

    // A known sender: message.received again, no second contact.created.
    const again = await json<MessageJson>(await api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: a.key, json: { from: "15557770001@s.whatsapp.net", text: "me again" } }));
    await arrival(f.typed, "message.received", again.id);
    await settle();
    await expectExactlyOnce(matching, notMatching, "message.received", again.id);
    expect((await ofType(f.all, "contact.created")).length).toBe(1);
  });

  it("message.received: a message from another sandbox session of the same account (and message.sent on the sender)", async () => {
    const { a, b } = await twoAccounts();
    const sender = await sandboxSession(a.key);
    const target = await sandboxSession(a.key);
    const f = await fixture(a, b, ["message.received"], { same: target.id, other: sender.id });
    const sent = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: a.key, json: { sessionId: sender.id, to: target.me!.chatId, text: "between sessions" } }));
    expect(sent.status).toBe("sent");
    const inbound = await arrivalWhere(f.typed, "message.received", (d) => d.data.text === "between sessions");
    await settle();
    // The receiving session's filter gets it; the sender's filter does not (it gets message.sent).
    const got = await expectExactlyOnce(...targets(f), "message.received", inbound.data.id);
    expect(got.data).toEqual(await getMessage(a.key, sender.me!.chatId, inbound.data.id, target.id));
    expect(got.data).toMatchObject({ direction: "inbound", sessionId: target.id, chatId: sender.me!.chatId, text: "between sessions" });
    await expectExactlyOnce([f.all, f.otherTypes, f.otherSession!], [f.typed, f.disabled, f.sameSession!, f.otherAccount], "message.sent", sent.id);
  });

  it("contact.created: POST /api/contacts (account-wide: not for session-filtered webhooks)", async () => {
    const { a, b } = await twoAccounts();
    const f = await fixture(a, b, ["contact.created"], { same: "ses_any" });
    const res = await api("/api/contacts", { method: "POST", key: a.key, json: { phone: "+4915112345678", name: "Ada", tags: ["vip"], attributes: { plan: "gold" } } });
    expect(res.status).toBe(201);
    const c = await json<ContactJson>(res);
    await arrival(f.typed, "contact.created", c.id);
    await settle();
    const got = await expectExactlyOnce([f.all, f.typed], [f.otherTypes, f.disabled, f.sameSession!, f.otherAccount], "contact.created", c.id);
    expect(got.data).toEqual(c);
    expect(got.data).toEqual(await json<ContactJson>(await api(`/api/contacts/${c.id}`, { key: a.key })));
    // A duplicate (409) announces nothing.
    expect((await api("/api/contacts", { method: "POST", key: a.key, json: { phone: "+4915112345678" } })).status).toBe(409);
    await settle();
    expect(await ofType(f.all, "contact.created")).toHaveLength(1);
  });
});

async function ofType(hook: Parameters<typeof arrival>[0], type: string) {
  return (await delivered(hook)).filter((d) => d.type === type);
}
