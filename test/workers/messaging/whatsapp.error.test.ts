import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sessionStub } from "../../../src/messaging/sessions/session-do.ts";
import { api, createKey, allShardD1s } from "../helpers.ts";
import { openWindows } from "./whatsapp-support.ts";
import { eventsOf, fakeFail, fakePhone, fakeRequests, json, waitFor, type MessageJson, type SessionJson } from "./support.ts";

async function create(key: string, token: string, phoneToken = "right-token") {
  const phone = await fakePhone(phoneToken);
  const res = await api("/api/sessions", {
    method: "POST",
    key,
    json: { network: "whatsapp", whatsapp: { phoneNumberId: phone.phoneNumberId, accessToken: token, appSecret: "s", verifyToken: "v" } },
  });
  expect(res.status).toBe(201);
  const session = await json<SessionJson>(res);
  // The recipient wrote first: free-form sends are inside the 24-hour window.
  if (session.status === "WORKING") await openWindows(session.id, phone.phoneNumberId, ["16505551234"], "s");
  return { phone, session };
}

const send = (key: string, sessionId: string) => api("/api/messages/send", { method: "POST", key, json: { sessionId, to: "16505551234", text: "x" } });

describe("messaging: WhatsApp error mapping", () => {
  it("a rejected token makes the session FAILED with reason invalid_token; sends answer 409", async () => {
    const k = await createKey("pro");
    const { session } = await create(k.key, "wrong-token");
    expect(session).toMatchObject({ status: "FAILED", statusReason: "invalid_token" });
    const res = await send(k.key, session.id);
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("session_not_working");
  });

  it("a token revoked later: the send fails with invalid_token and the session goes FAILED (session.disconnected)", async () => {
    const k = await createKey("pro");
    const { phone, session } = await create(k.key, "right-token");
    expect(session.status).toBe("WORKING");
    await fakeFail(phone.phoneNumberId, 190);
    const m = await json<MessageJson>(await send(k.key, session.id));
    expect(m).toMatchObject({ status: "failed", error: { code: "invalid_token" } });
    const s = await json<SessionJson>(await api(`/api/sessions/${session.id}`, { key: k.key }));
    expect(s).toMatchObject({ status: "FAILED", statusReason: "invalid_token" });
    await waitFor(() => eventsOf(k.accountId, "session.disconnected")[0], 10_000, "disconnected");
    // Restart checks the credentials again: FAILED -> STARTING -> WORKING.
    const r = await api(`/api/sessions/${session.id}/restart`, { method: "POST", key: k.key });
    expect((await json<SessionJson>(r)).status).toBe("WORKING");
  });

  it.each([
    [130429, "rate_limited"],
    [131047, "reengagement_window_closed"],
    [131026, "undeliverable"],
  ])("Graph error %i fails the message with reason %s and keeps the session WORKING", async (code, reason) => {
    const k = await createKey("pro");
    const { phone, session } = await create(k.key, "right-token");
    await fakeFail(phone.phoneNumberId, code);
    const m = await json<MessageJson>(await send(k.key, session.id));
    expect(m).toMatchObject({ status: "failed", error: { code: reason } });
    const s = await json<SessionJson>(await api(`/api/sessions/${session.id}`, { key: k.key }));
    expect(s.status).toBe("WORKING");
  });

  it("a queued send hitting the rate limit (130429) reached Meta, stays pending with a retry scheduled, and is sent on the retry", async () => {
    const k = await createKey("pro");
    const { phone, session } = await create(k.key, "right-token");
    await fakeFail(phone.phoneNumberId, 130429);
    // An unpaced session, so the test does not wait for pacing.
    const { env } = await import("cloudflare:workers");
    for (const d1 of allShardD1s()) await d1.prepare("UPDATE messaging_sessions SET send_rate_per_minute = NULL WHERE id = ?").bind(session.id).run();
    const before = (await fakeRequests(phone.phoneNumberId)).filter((r) => r.method === "POST" && r.body?.type === "text").length;
    const res = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: session.id, messages: [{ to: "16505551234", text: "a" }] } });
    expect(res.status).toBe(202);
    const { batchId } = await json<{ batchId: string }>(res);
    const batch = async () => json<{ pending: number; failed: number; sent: number }>(await api(`/api/messages/batches/${batchId}`, { key: k.key }));
    // The first attempt reached the fake and was refused with 130429.
    await waitFor(async () => (await fakeRequests(phone.phoneNumberId)).filter((r) => r.method === "POST" && r.body?.type === "text").length > before, 10_000, "the send reached the fake");
    const stub = sessionStub(env, session.id);
    const queued = await waitFor(
      () => runInDurableObject(stub, (_o, state) => state.storage.sql.exec<{ due: number; attempts: number }>("SELECT due, attempts FROM outbox").toArray().find((r) => r.attempts === 1)),
      10_000,
      "the retry scheduled",
    );
    // Retried after Meta's minute, not failed: still pending, with the session's alarm set for it.
    expect(queued.due).toBeGreaterThan(Date.now() + 30_000);
    expect(await batch()).toMatchObject({ pending: 1, failed: 0, sent: 0 });
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).not.toBeNull();
    // The minute passes: the retry sends it.
    await runInDurableObject(stub, (_o, state) => void state.storage.sql.exec("UPDATE outbox SET due = ?", Date.now() - 1));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await waitFor(async () => ((await batch()).sent === 1 ? batch() : undefined), 10_000, "sent on the retry")).toMatchObject({ pending: 0, failed: 0, sent: 1 });
    expect((await fakeRequests(phone.phoneNumberId)).filter((r) => r.method === "POST" && r.body?.type === "text").length).toBe(before + 2);
  });
});
