import { listDurableObjectIds } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "../helpers.ts";
import { sandboxSession } from "./support.ts";

async function sessionObjectExists(sessionId: string): Promise<boolean> {
  const id = env.SESSIONS.idFromName(sessionId);
  return (await listDurableObjectIds(env.SESSIONS)).some((x) => x.equals(id));
}

describe("messaging: an unknown session id never creates a Durable Object", () => {
  it("send, send-media, sandbox inbound, restart, delete and the hooks answer 404 and leave no object behind", async () => {
    const k = await createKey("pro");
    const calls: Array<[string, string, unknown?]> = [
      ["POST", "/api/messages/send", { sessionId: "ses_ghost_send", to: "+14155550123", text: "x" }],
      ["POST", "/api/messages/send-media", { sessionId: "ses_ghost_media", to: "+14155550123", type: "image", media: { url: "https://files.example.com/a.png" } }],
      ["POST", "/api/sessions/ses_ghost_inbound/sandbox/inbound", { from: "+14155550123", text: "hi" }],
      ["POST", "/api/sessions/ses_ghost_restart/restart"],
      ["DELETE", "/api/sessions/ses_ghost_delete"],
      ["GET", "/api/sessions/ses_ghost_get"],
    ];
    for (const [method, path, json] of calls) {
      const res = await api(path, { method, key: k.key, ...(json ? { json } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect((await errorOf(res)).code).toBe("not_found");
    }
    expect((await api("/hooks/whatsapp/ses_ghost_hook", { method: "POST", body: "{}" })).status).toBe(404);
    expect((await api("/hooks/whatsapp/ses_ghost_hook?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1")).status).toBe(404);
    for (const id of ["ses_ghost_send", "ses_ghost_media", "ses_ghost_inbound", "ses_ghost_restart", "ses_ghost_delete", "ses_ghost_get", "ses_ghost_hook"]) {
      expect(await sessionObjectExists(id), id).toBe(false);
    }
  });

  it("another account's session is a 404 too, and a real one still sends", async () => {
    const owner = await createKey("pro");
    const other = await createKey("pro");
    const s = await sandboxSession(owner.key);
    const stolen = await api("/api/messages/send", { method: "POST", key: other.key, json: { sessionId: s.id, to: "+14155550123", text: "x" } });
    expect(stolen.status).toBe(404);
    const inbound = await api(`/api/sessions/${s.id}/sandbox/inbound`, { method: "POST", key: other.key, json: { from: "+14155550123", text: "hi" } });
    expect(inbound.status).toBe(404);
    const mine = await api("/api/messages/send", { method: "POST", key: owner.key, json: { sessionId: s.id, to: "+14155550123", text: "x" } });
    expect(mine.status).toBe(201);
    expect(await sessionObjectExists(s.id)).toBe(true);
  });
});
