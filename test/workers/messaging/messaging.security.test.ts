import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createKey, allShardD1s } from "../helpers.ts";
import { eventsOf, fakePhone, json, sandboxSession, waitFor, type MessageJson } from "./support.ts";

/** Every row of every table of every database (the directory and each shard), as one text. */
async function everyD1Row(): Promise<string> {
  const dumps: string[] = [];
  for (const d1 of allShardD1s()) {
    const { results: tables } = await d1.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'").all<{ name: string }>();
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(["messaging_sessions", "events", "messages"]));
  }
  for (const d1 of [env.DB, ...allShardD1s()]) {
    const { results: tables } = await d1.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'").all<{ name: string }>();
    dumps.push(...(await Promise.all(tables.map(async ({ name }) => JSON.stringify((await d1.prepare(`SELECT * FROM "${name}"`).all()).results)))));
  }
  return dumps.join("\n");
}

describe("messaging: isolation and secrets", () => {
  it("every route with another account's ids answers 404 and changes nothing", async () => {
    const owner = await createKey("pro");
    const other = await createKey("pro");
    const s = await sandboxSession(owner.key);
    const m = await json<MessageJson>(await api("/api/messages/send", { method: "POST", key: owner.key, json: { sessionId: s.id, to: "+14155550123", text: "mine" } }));
    const c = await json<{ id: string }>(await api("/api/contacts", { method: "POST", key: owner.key, json: { phone: "+14155550123", name: "Mine" } }));
    const bulk = await json<{ batchId: string }>(await api("/api/messages/send-bulk", { method: "POST", key: owner.key, json: { sessionId: s.id, messages: [{ to: "+14155550123", text: "b" }] } }));
    const o = other.key;
    const attempts: [string, RequestInit & { json?: unknown }][] = [
      [`/api/sessions/${s.id}`, {}],
      [`/api/sessions/${s.id}`, { method: "DELETE" }],
      [`/api/sessions/${s.id}/restart`, { method: "POST" }],
      [`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", json: { from: "+14155550999", text: "x" } }],
      ["/api/messages/send", { method: "POST", json: { sessionId: s.id, to: "+14155550123", text: "x" } }],
      ["/api/messages/send-media", { method: "POST", json: { sessionId: s.id, to: "+14155550123", type: "image", media: { url: "https://example.com/a.png" } } }],
      ["/api/messages/send-bulk", { method: "POST", json: { sessionId: s.id, messages: [{ to: "+14155550123", text: "x" }] } }],
      [`/api/messages/batches/${bulk.batchId}`, {}],
      [`/api/messages/14155550123@c.us?sessionId=${s.id}`, {}],
      [`/api/contacts/${c.id}`, {}],
      [`/api/contacts/${c.id}`, { method: "PUT", json: { name: "stolen" } }],
      [`/api/contacts/${c.id}`, { method: "DELETE" }],
    ];
    for (const [path, init] of attempts) {
      const res = await api(path, { ...init, key: o });
      expect(res.status, `${init.method ?? "GET"} ${path}`).toBe(404);
    }
    // Lists of the other account are empty; the owner's data is unchanged.
    expect((await json<{ data: unknown[] }>(await api("/api/sessions", { key: o }))).data).toHaveLength(0);
    expect((await json<{ data: unknown[] }>(await api("/api/contacts", { key: o }))).data).toHaveLength(0);
    expect((await json<{ data: unknown[] }>(await api("/api/messages/14155550123@c.us", { key: o }))).data).toHaveLength(0);
    expect(await json(await api(`/api/sessions/${s.id}`, { key: owner.key }))).toMatchObject({ status: "WORKING" });
    expect(await json(await api(`/api/contacts/${c.id}`, { key: owner.key }))).toMatchObject({ name: "Mine" });
    const history = await json<{ data: MessageJson[] }>(await api(`/api/messages/14155550123@c.us?sessionId=${s.id}`, { key: owner.key }));
    expect(history.data.map((x) => x.id)).toContain(m.id);
    expect(history.data.every((x) => x.text !== "x")).toBe(true);
  });

  it("WhatsApp credentials never appear in any response, list, event or D1 row", async () => {
    const k = await createKey("pro");
    const phone = await fakePhone("super-secret-token-123");
    const secrets = ["super-secret-token-123", "app-secret-xyz", "verify-token-xyz"];
    const logs: string[] = [];
    const orig = { log: console.log, error: console.error, warn: console.warn };
    for (const level of ["log", "error", "warn"] as const) console[level] = (...args: unknown[]) => { logs.push(args.map(String).join(" ")); orig[level](...args); };
    try {
      const created = await api("/api/sessions", {
        method: "POST",
        key: k.key,
        json: { network: "whatsapp", whatsapp: { phoneNumberId: phone.phoneNumberId, accessToken: secrets[0], appSecret: secrets[1], verifyToken: secrets[2] } },
      });
      const session = await json<{ id: string }>(created);
      const bodies = [JSON.stringify(session), await (await api("/api/sessions", { key: k.key })).text(), await (await api(`/api/sessions/${session.id}`, { key: k.key })).text()];
      bodies.push(await (await api(`/api/sessions/${session.id}/restart`, { method: "POST", key: k.key })).text());
      bodies.push(await (await api("/api/messages/send", { method: "POST", key: k.key, json: { sessionId: session.id, to: "+16505551234", text: "hi" } })).text());
      // connected, disconnected by the restart, connected again
      const events = JSON.stringify(await waitFor(() => eventsOf(k.accountId, "session.connected").length >= 2 && eventsOf(k.accountId)));
      expect(events).toContain(session.id);
      const rows = await everyD1Row();
      expect(rows).toContain(session.id);
      for (const text of [...bodies, events, rows, ...logs]) for (const secret of secrets) expect(text).not.toContain(secret);
    } finally {
      Object.assign(console, orig);
    }
  });

  it("hooks: a whatsapp hook for a sandbox or unknown session is 404; media without a valid signature is 404", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    expect((await api(`/hooks/whatsapp/${s.id}?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1`)).status).toBe(404);
    expect((await api(`/hooks/whatsapp/ses_unknown`, { method: "POST", body: "{}", headers: { "Content-Type": "application/json" } })).status).toBe(404);
    expect((await api(`/hooks/media/med_0000000000000000000000`)).status).toBe(404);
    expect((await api(`/hooks/media/med_000000000000000000000?exp=99999999999&sig=abc`)).status).toBe(404);
  });
});
