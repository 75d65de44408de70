import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createKey, allShardD1s } from "../helpers.ts";
import { fakeRequests, fakeStall, json, waitFor, type MessageJson } from "./support.ts";
import { openWindows, whatsappSession } from "./whatsapp-support.ts";

const TO = "16505551234";

/** A WORKING whatsapp session, unpaced, whose customer wrote first (free-form sends allowed). */
async function session(key: string) {
  const { phone, session } = await whatsappSession(key);
  await openWindows(session.id, phone.phoneNumberId, [TO]);
  for (const d1 of allShardD1s()) await d1.prepare("UPDATE messaging_sessions SET send_rate_per_minute = NULL WHERE id = ?").bind(session.id).run();
  return { phone, session };
}

/** The message sends (not read receipts) that reached the fake for this number. */
const sendsReceived = async (phoneNumberId: string) => (await fakeRequests(phoneNumberId)).filter((r) => r.method === "POST" && r.path.endsWith("/messages") && r.body?.status !== "read");

async function bulkOne(key: string, sessionId: string, text: string): Promise<MessageJson> {
  const res = await api("/api/messages/send-bulk", { method: "POST", key, json: { sessionId, messages: [{ to: TO, text }] } });
  expect(res.status).toBe(202);
  const { batchId } = await json<{ batchId: string }>(res);
  await waitFor(async () => (await json<{ pending: number }>(await api(`/api/messages/batches/${batchId}`, { key }))).pending === 0, 12_000, "the queued send settled");
  const page = await json<{ data: MessageJson[] }>(await api(`/api/messages/${TO}@c.us?sessionId=${sessionId}`, { key }));
  return page.data.find((m) => m.batchId === batchId)!;
}

const UNKNOWN = { status: "failed", error: { code: "send_outcome_unknown", message: expect.stringMatching(/may or may not have been sent/) } };

describe("messaging: a WhatsApp send without an answer has an unknown outcome and is never sent again", () => {
  it("a queued send the Cloud API holds past the timeout reached it once and ends send_outcome_unknown, not retried", async () => {
    const k = await createKey("pro");
    const { phone, session: s } = await session(k.key);
    await fakeStall(phone.phoneNumberId, "hang");
    const m = await bulkOne(k.key, s.id, "hang");
    expect(m).toMatchObject({ ...UNKNOWN, sentAt: null });
    // The next send is answered: one request for each, none repeated.
    const next = await bulkOne(k.key, s.id, "after");
    expect(next).toMatchObject({ status: "sent" });
    expect((await sendsReceived(phone.phoneNumberId)).map((r) => (r.body!.text as { body: string }).body)).toEqual(["hang", "after"]);
  });

  it("a connection lost after the request was sent: the queued send and a direct send both end send_outcome_unknown, one request each", async () => {
    const k = await createKey("pro");
    const { phone, session: s } = await session(k.key);
    await fakeStall(phone.phoneNumberId, "drop", 2);
    expect(await bulkOne(k.key, s.id, "queued")).toMatchObject(UNKNOWN);
    const res = await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: s.id, to: TO, text: "direct" } });
    expect(res.status).toBe(201);
    expect(await json<MessageJson>(res)).toMatchObject(UNKNOWN);
    expect((await sendsReceived(phone.phoneNumberId)).map((r) => (r.body!.text as { body: string }).body)).toEqual(["queued", "direct"]);
    const again = await json<{ status: string }>(await api(`/api/sessions/${s.id}`, { key: k.key }));
    expect(again.status).toBe("WORKING");
  });
});
