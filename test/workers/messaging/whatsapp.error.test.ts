import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { openWindows } from "./whatsapp-support.ts";
import { eventsOf, fakeFail, fakePhone, json, waitFor, type MessageJson, type SessionJson } from "./support.ts";

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

  it("a queued send hitting the rate limit (130429) is retried later instead of failing", async () => {
    const k = await createKey("pro");
    const { phone, session } = await create(k.key, "right-token");
    await fakeFail(phone.phoneNumberId, 130429);
    // An unpaced session, so the test does not wait for pacing.
    const { env } = await import("cloudflare:workers");
    await env.DB.prepare("UPDATE messaging_sessions SET send_rate_per_minute = NULL WHERE id = ?").bind(session.id).run();
    const res = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: session.id, messages: [{ to: "16505551234", text: "a" }] } });
    expect(res.status).toBe(202);
    const { batchId } = await json<{ batchId: string }>(res);
    const progress = await waitFor(async () => {
      const b = await json<{ pending: number; failed: number; sent: number }>(await api(`/api/messages/batches/${batchId}`, { key: k.key }));
      return b.pending === 0 || b.failed > 0 ? b : undefined;
    }, 2_500, "first attempt").catch(() => null);
    // The first attempt was rate limited: still pending (retried after a minute), not failed.
    expect(progress).toBeNull();
  });
});
