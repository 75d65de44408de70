import { describe, expect, it } from "vitest";
import { api, createKey } from "../helpers.ts";
import { emitEvent } from "../webhooks/support.ts";
import { byId, poll, pollUntil } from "./poll.support.ts";

describe("event poll: security", () => {
  it("401 without a key and with a made-up one; a stream ticket is no key here", async () => {
    expect((await api("/api/events/poll")).status).toBe(401);
    expect((await api("/api/events/poll", { key: `sk_live_${"x".repeat(40)}` })).status).toBe(401);
    const k = await createKey("pro");
    const ticket = ((await (await api("/api/events/stream/tickets", { method: "POST", key: k.key })).json()) as { ticket: string }).ticket;
    expect((await api(`/api/events/poll?ticket=${ticket}`)).status).toBe(401);
  });

  it("another account's cursor reveals nothing: B polling from A's event id (and from the beginning, on A's session) gets only B's events", async () => {
    const a = await createKey("pro");
    const b = await createKey("pro");
    const startB = (await poll(b)).next;
    const startA = (await poll(a)).next;
    const [evA] = await emitEvent({ accountId: a.accountId, type: "message.received", sessionId: "ses_of_a", data: { text: "secret of a" } });
    const [evB] = await emitEvent({ accountId: b.accountId, type: "contact.created", data: { id: "ct_b" } });
    await pollUntil(a, startA, 1);
    const fromA = await pollUntil(b, evA!.id, 1);
    expect(fromA.events.map((e) => e.id)).toEqual([evB!.id]);
    const fromStart = await poll(b, `?after=evt_000000000000000000000&limit=500`);
    expect(fromStart.data.map((e) => e.id)).toEqual([evB!.id]);
    expect(await poll(b, `?after=evt_000000000000000000000&sessionId=ses_of_a`)).toEqual({ data: [], next: "evt_000000000000000000000", hasMore: false });
    expect(JSON.stringify(await poll(b, `?after=${startB}`))).not.toContain("secret of a");
  });

  it("never answers webhook.test sends (not published events)", async () => {
    const k = await createKey("pro");
    const start = (await poll(k)).next;
    const hook = await api("/api/webhooks", { method: "POST", key: k.key, json: { url: "http://127.0.0.1:9/x", events: ["*"] } });
    const { id } = (await hook.json()) as { id: string };
    expect((await api(`/api/webhooks/${id}/test`, { method: "POST", key: k.key })).status).toBe(200);
    const [ev] = await emitEvent({ accountId: k.accountId, type: "contact.created", data: { id: "ct_1" } });
    const got = await pollUntil(k, start, 1);
    expect(got.events.map((e) => e.type)).toEqual(["contact.created"]);
    expect(got.events[0]!.id).toBe(ev!.id);
  });

  it("a page never passes its byte bound: large events come a few at a time", async () => {
    const k = await createKey("pro");
    const start = (await poll(k)).next;
    const big = "x".repeat(200 * 1024);
    const emitted = byId(await emitEvent(Array.from({ length: 30 }, (_, n) => ({ accountId: k.accountId, type: "contact.created" as const, data: { n, big } }))));
    await pollUntil(k, start, 1);
    await new Promise((r) => setTimeout(r, 1000));
    const res = await api(`/api/events/poll?after=${start}&limit=500`, { key: k.key });
    const text = await res.text();
    expect(text.length).toBeLessThan(4 * 1024 * 1024 + 64 * 1024);
    const page = JSON.parse(text) as { data: { id: string }[]; hasMore: boolean };
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.length).toBeLessThan(30);
    expect(page.hasMore).toBe(true);
    expect(page.data.map((e) => e.id)).toEqual(emitted.slice(0, page.data.length).map((e) => e.id));
  });
});
