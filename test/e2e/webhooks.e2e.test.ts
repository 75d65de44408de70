import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
});
