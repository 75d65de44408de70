import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver, type Received, type RunningReceiver } from "../support/receiver.ts";
import { call, newKey } from "./client.ts";

let receiver: RunningReceiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver?.close());

interface Campaign {
  id: string;
  status: string;
  startedAt: string | null;
  stats: { total: number; pending: number; sent: number; delivered: number; read: number; failed: number; skipped: number };
}

async function post<T>(key: string, path: string, json?: unknown): Promise<T> {
  const res = await call(path, { method: "POST", key, ...(json !== undefined ? { json } : {}) });
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function until(key: string, id: string, done: (c: Campaign) => boolean, timeoutMs = 30_000): Promise<Campaign> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const c = (await (await call(`/api/campaigns/${id}`, { key })).json()) as Campaign;
    const s = c.stats;
    expect(s.pending + s.sent + s.delivered + s.read + s.failed + s.skipped).toBe(s.total);
    if (done(c)) return c;
    if (Date.now() > end) throw new Error(`campaign not done: ${JSON.stringify(c)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("campaigns end to end (npm run dev)", () => {
  it("imports contacts, runs a personalised campaign over a tag, skips opted-out ones, and announces completion once", async () => {
    const key = await newKey();
    const session = await post<{ id: string }>(key, "/api/sessions", { name: "e2e campaigns" });
    const hook = await post<{ secret: string }>(key, "/api/webhooks", { url: `${receiver.url}/in/camp1`, events: ["campaign.completed"] });
    await fetch(`${receiver.url}/inbox/camp1`, { method: "PUT", body: JSON.stringify({ secrets: [hook.secret] }) });
    const contacts = Array.from({ length: 200 }, (_, i) => ({ phone: `+1650${3_000_000 + i}`, name: `E${i}`, tags: ["e2e"], optedOut: i % 50 === 0 }));
    expect(await post(key, "/api/contacts/import", { contacts })).toMatchObject({ created: 200, existing: 0, rejected: [] });

    const c = await post<Campaign>(key, "/api/campaigns", { name: "e2e", sessionId: session.id, message: { text: "Hello {{name|friend}}" }, audience: { tags: ["e2e"] } });
    await post(key, `/api/campaigns/${c.id}/start`);
    const done = await until(key, c.id, (x) => x.status === "completed");
    expect(done.stats).toMatchObject({ total: 200, skipped: 4, pending: 0, failed: 0 });

    type R = { seq: number; name: string; chatId: string; messageId: string; status: string; reason: string | null };
    const all: R[] = [];
    let cursor: string | null = null;
    do {
      const page = (await (await call(`/api/campaigns/${c.id}/recipients?limit=100${cursor ? `&cursor=${cursor}` : ""}`, { key })).json()) as { data: R[]; nextCursor: string | null };
      all.push(...page.data);
      cursor = page.nextCursor;
    } while (cursor);
    expect(all).toHaveLength(200);
    expect(all.map((r) => r.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(all.find((r) => r.name === "E0")).toMatchObject({ status: "skipped", reason: "opted_out" });
    const second = all.find((r) => r.name === "E1")!;
    const history = (await (await call(`/api/messages/${second.chatId}`, { key })).json()) as { data: { id: string; text: string; campaignId: string }[] };
    expect(history.data[0]).toMatchObject({ id: second.messageId, text: "Hello E1", campaignId: c.id });

    await new Promise((r) => setTimeout(r, 2000));
    const got = (await (await fetch(`${receiver.url}/inbox/camp1`)).json()) as Received[];
    expect(got).toHaveLength(1);
    expect(got[0]!.verified).toBe(true);
    expect(JSON.parse(got[0]!.body)).toMatchObject({ type: "campaign.completed", data: { id: c.id, stats: { total: 200, skipped: 4 } } });
  });

  it("a scheduled campaign starts at its time", async () => {
    const key = await newKey();
    const session = await post<{ id: string }>(key, "/api/sessions", { name: "e2e scheduled" });
    await post(key, "/api/contacts", { phone: "+16504000001", name: "Sched", tags: ["sched"] });
    const at = Date.now() + 3000;
    const c = await post<Campaign>(key, "/api/campaigns", { name: "later", sessionId: session.id, message: { text: "hi" }, audience: { tags: ["sched"] }, scheduledAt: new Date(at).toISOString() });
    expect((await post<Campaign>(key, `/api/campaigns/${c.id}/start`)).status).toBe("scheduled");
    const done = await until(key, c.id, (x) => x.status === "completed", 20_000);
    expect(Date.parse(done.startedAt!)).toBeGreaterThanOrEqual(at - 50);
    expect(Date.parse(done.startedAt!) - at).toBeLessThan(3000);
  });
});
