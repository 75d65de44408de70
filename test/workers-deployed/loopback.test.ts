import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getDb } from "../../src/db/client.ts";
import { compileJobs, webhooks } from "../../src/db/schema/index.ts";
import { newWebhookSecret } from "../../src/events/signing.ts";
import { newId } from "../../src/platform/ids.ts";
import { api, createKey, errorOf, shardDb, type TestKey } from "../workers/helpers.ts";
import { json, sandboxSession } from "../workers/messaging/support.ts";
import { deliveriesOf, emitEvent, newInbox, receivedAt, waitFor } from "../workers/webhooks/support.ts";

// Deployed (ALLOW_LOOPBACK_URLS = "0"), every URL the Worker would call on a user's behalf must be
// refused when it points at this machine: the forms `npm run dev` allows, and a live listener.

/** Loopback URLs that dev settings accept; the first one reaches a real server (the test receiver). */
function loopbackUrls(): string[] {
  return [newInbox().url, "http://localhost/hook", "https://127.0.0.1/hook", "https://localhost:8443/hook", "http://[::1]/hook"];
}

/** A 400 invalid_request whose issues name `path`. */
async function expectRefused(res: Response, path: string, what: string): Promise<void> {
  expect(res.status, what).toBe(400);
  const err = await errorOf(res);
  expect(err.code, what).toBe("invalid_request");
  expect((err.details as { issues: unknown[] }).issues, what).toEqual(expect.arrayContaining([expect.objectContaining({ path })]));
}

async function webhookCount(key: TestKey): Promise<number> {
  return (await json<{ data: unknown[] }>(await api("/api/webhooks", { key: key.key }))).data.length;
}

describe("deployed: loopback URLs are refused", () => {
  it("POST /api/webhooks and PUT /api/webhooks/{id}: 400 on url, nothing stored or changed", async () => {
    const k = await createKey("pro");
    for (const url of loopbackUrls()) {
      await expectRefused(await api("/api/webhooks", { method: "POST", key: k.key, json: { url, events: ["*"] } }), "url", `POST ${url}`);
    }
    expect(await webhookCount(k)).toBe(0);
    // A public URL is accepted: the refusals above are about the URL, not the request.
    const created = await api("/api/webhooks", { method: "POST", key: k.key, json: { url: "https://hooks.example.com/in", events: ["*"] } });
    expect(created.status).toBe(201);
    const { id } = await json<{ id: string }>(created);
    for (const url of loopbackUrls()) {
      await expectRefused(await api(`/api/webhooks/${id}`, { method: "PUT", key: k.key, json: { url } }), "url", `PUT ${url}`);
    }
    expect((await json<{ url: string }>(await api(`/api/webhooks/${id}`, { key: k.key }))).url).toBe("https://hooks.example.com/in");
  });

  it("a webhook stored with a loopback URL (registered under dev settings) is never called: test and event deliveries fail", async () => {
    const k = await createKey("pro");
    const inbox = newInbox();
    const now = Date.now();
    const id = newId("wh", now);
    await (await shardDb(k.accountId)).insert(webhooks).values({ id, accountId: k.accountId, url: inbox.url, description: null, events: ["*"], sessionId: null, enabled: true, disabledReason: null, secret: newWebhookSecret(), previousSecret: null, previousSecretExpiresAt: null, failingSince: null, createdAt: now, updatedAt: now });

    const test = await api(`/api/webhooks/${id}/test`, { method: "POST", key: k.key });
    expect(test.status).toBe(200);
    expect(await json(test)).toMatchObject({ success: false, statusCode: null, error: expect.stringMatching(/^URL refused: /) });

    await emitEvent({ accountId: k.accountId });
    const failed = await waitFor(async () => {
      const d = (await deliveriesOf(k, id)).filter((x) => x.eventType !== "webhook.test");
      return d[0]?.status === "failed" ? d[0] : undefined;
    }, 15_000, "the event's delivery to fail");
    expect(failed.lastError).toMatch(/^URL refused: /);
    expect(failed.attempts).toHaveLength(1);
    expect(await receivedAt(inbox.name)).toEqual([]);
  });

  it("a finished compile job whose callback URL is loopback (submitted under dev settings): the callback fails, never called", async () => {
    const k = await createKey("pro");
    const inbox = newInbox();
    const now = Date.now();
    const id = newId("job", now);
    await getDb(env.DB).insert(compileJobs).values({ id, accountId: k.accountId, status: "succeeded", engine: "pdflatex", requeueAt: now, createdAt: now, completedAt: now, callbackUrl: inbox.url, callbackSecret: newWebhookSecret(), callbackStatus: "pending" });
    // What the compile consumer queues when a job with a callback finishes.
    await env.COMPILE_QUEUE.send({ kind: "callback", jobId: id, accountId: k.accountId });
    const job = await waitFor(async () => {
      const j = await json<{ callbackStatus: string | null }>(await api(`/v1/compile/jobs/${id}`, { key: k.key }));
      return j.callbackStatus !== "pending" ? j : undefined;
    }, 15_000, "the callback to settle");
    expect(job.callbackStatus).toBe("failed");
    expect(await receivedAt(inbox.name)).toEqual([]);
  });

  it("media by URL (send, bulk, sandbox inbound, campaigns) and compile callbacks: 400 on the URL's field", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const campaignMessage = (url: string) => ({ name: "c", sessionId: s.id, message: { type: "image", media: { url } }, audience: { all: true } });
    for (const url of loopbackUrls()) {
      const media = { type: "image", media: { url } };
      await expectRefused(await api("/api/messages/send-media", { method: "POST", key: k.key, json: { sessionId: s.id, to: "+15550001111", ...media } }), "media.url", `send-media ${url}`);
      await expectRefused(await api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: k.key, json: { from: "+15550001111", ...media } }), "media.url", `inbound ${url}`);
      await expectRefused(await api("/api/campaigns", { method: "POST", key: k.key, json: campaignMessage(url) }), "message.media.url", `campaign ${url}`);
      await expectRefused(await api("/v1/compile/async", { method: "POST", key: k.key, json: { source: "\\documentclass{article}\\begin{document}x\\end{document}", callbackUrl: url } }), "callbackUrl", `compile ${url}`);

      const bulk = await api("/api/messages/send-bulk", { method: "POST", key: k.key, json: { sessionId: s.id, messages: [{ to: "+15550001111", text: "ok" }, { to: "+15550001111", ...media }] } });
      expect(bulk.status, `bulk ${url}`).toBe(202);
      expect(await json(bulk), `bulk ${url}`).toMatchObject({ accepted: 1, rejected: [{ index: 1, error: { code: "invalid_request", message: expect.stringContaining("media.url") } }] });
    }
    // Nothing of the refused requests was kept: no campaign, no compile job, only the bulk's text.
    expect((await json<{ data: unknown[] }>(await api("/api/campaigns", { key: k.key }))).data).toEqual([]);
    expect((await json<{ data: unknown[] }>(await api("/v1/compile/jobs", { key: k.key }))).data).toEqual([]);
  });
});
