import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { startReceiver, type Received, type RunningReceiver } from "../support/receiver.ts";
import { call, newKey } from "./client.ts";

let receiver: RunningReceiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver?.close());

async function inbox(name: string): Promise<Received[]> {
  return (await (await fetch(`${receiver.url}/inbox/${name}`)).json()) as Received[];
}

describe("webhooks end to end (npm run dev)", () => {
  it("registers a loopback webhook (allowed in dev), and /test delivers a webhook.test the reference library verifies", async () => {
    const key = await newKey();
    const created = await call("/api/webhooks", { method: "POST", key, json: { url: `${receiver.url}/in/e2e1`, events: ["*"] } });
    expect(created.status).toBe(201);
    const hook = (await created.json()) as { id: string; secret: string };
    await fetch(`${receiver.url}/inbox/e2e1`, { method: "PUT", body: JSON.stringify({ secrets: [hook.secret], script: [200, 500] }) });

    const ok = await call(`/api/webhooks/${hook.id}/test`, { method: "POST", key });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ success: true, statusCode: 200 });
    const failed = await call(`/api/webhooks/${hook.id}/test`, { method: "POST", key });
    expect(await failed.json()).toMatchObject({ success: false, statusCode: 500 });

    const got = await inbox("e2e1");
    expect(got.map((g) => [g.type, g.verified])).toEqual([["webhook.test", true], ["webhook.test", true]]);
    const log = (await (await call(`/api/webhooks/${hook.id}/deliveries`, { key })).json()) as { data: { status: string; attempts: unknown[] }[] };
    expect(log.data.map((d) => d.status).sort()).toEqual(["failed", "succeeded"]);
  });

  it("refuses private targets even in dev, and documents the routes in /openapi.json", async () => {
    const key = await newKey();
    for (const url of ["http://10.0.0.1/hook", "https://169.254.169.254/", "https://[::ffff:a9fe:a9fe]/", "http://printer.local/"]) {
      const res = await call("/api/webhooks", { method: "POST", key, json: { url, events: ["*"] } });
      expect(res.status, url).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe("invalid_request");
    }
    const doc = (await (await call("/openapi.json")).json()) as { paths: Record<string, unknown> };
    for (const p of ["/api/webhooks", "/api/webhooks/{id}", "/api/webhooks/{id}/test", "/api/webhooks/{id}/deliveries", "/api/webhooks/{id}/deliveries/{deliveryId}/retry"]) {
      expect(Object.keys(doc.paths)).toContain(p);
    }
  });

  it("a sandbox send reaches a loopback receiver as signed message.sent, message.delivered, message.read", async () => {
    const key = await newKey();
    const sessionRes = await call("/api/sessions", { method: "POST", key, json: { name: "e2e events" } });
    expect(sessionRes.status).toBe(201);
    const session = (await sessionRes.json()) as { id: string; status: string };
    expect(session.status).toBe("WORKING");
    const created = await call("/api/webhooks", { method: "POST", key, json: { url: `${receiver.url}/in/e2e-send`, events: ["message.sent", "message.delivered", "message.read"], sessionId: session.id } });
    expect(created.status).toBe(201);
    const hook = (await created.json()) as { secret: string };
    await fetch(`${receiver.url}/inbox/e2e-send`, { method: "PUT", body: JSON.stringify({ secrets: [hook.secret] }) });

    const sendRes = await call("/api/messages/send", { method: "POST", key, json: { sessionId: session.id, to: "+14155550142", text: "end to end" } });
    expect(sendRes.status).toBe(201);
    const message = (await sendRes.json()) as { id: string; status: string };
    expect(message.status).toBe("sent");

    const deadline = Date.now() + 30_000;
    let got: Received[] = [];
    while (Date.now() < deadline) {
      got = await inbox("e2e-send");
      if (got.length >= 3) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await new Promise((r) => setTimeout(r, 1000)); // nothing more may follow
    got = await inbox("e2e-send");
    expect(got.map((g) => g.type)).toEqual(["message.sent", "message.delivered", "message.read"]);
    for (const g of got) {
      expect(g.verified).toBe(true);
      // Verified here too, with the reference library and the secret shown at creation.
      const body = new Webhook(hook.secret).verify(g.body, { "webhook-id": g.webhookId, "webhook-timestamp": g.timestamp, "webhook-signature": g.signature }) as { data: { id: string; status: string } };
      expect(body.data.id).toBe(message.id);
    }
    expect(got.map((g) => (JSON.parse(g.body) as { data: { status: string } }).data.status)).toEqual(["sent", "delivered", "read"]);
    expect(new Set(got.map((g) => g.webhookId)).size).toBe(3);
  });
});
