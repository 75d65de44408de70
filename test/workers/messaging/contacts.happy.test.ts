import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "../helpers.ts";
import { eventsOf, json, waitFor } from "./support.ts";
import type { components } from "../../../client/index.ts";

type ContactJson = components["schemas"]["Contact"];

describe("messaging: contacts", () => {
  it("CRUD with unique phone per account, contact.created on create", async () => {
    const k = await createKey("pro");
    const res = await api("/api/contacts", { method: "POST", key: k.key, json: { phone: "+14155550100", name: "Ada", tags: ["vip"], attributes: { plan: "gold" } } });
    expect(res.status).toBe(201);
    const c = await json<ContactJson>(res);
    expect(c).toMatchObject({ phone: "+14155550100", chatId: "14155550100@c.us", name: "Ada", tags: ["vip"], attributes: { plan: "gold" }, optedOut: false });
    const dup = await api("/api/contacts", { method: "POST", key: k.key, json: { phone: "14155550100@s.whatsapp.net" } });
    expect(dup.status).toBe(409);
    expect((await errorOf(dup)).code).toBe("contact_exists");
    const put = await api(`/api/contacts/${c.id}`, { method: "PUT", key: k.key, json: { email: "ada@example.com" } });
    expect(await json(put)).toMatchObject({ name: "Ada", email: "ada@example.com", tags: ["vip"] });
    expect(await json(await api(`/api/contacts/${c.id}`, { key: k.key }))).toMatchObject({ email: "ada@example.com" });
    expect((await api(`/api/contacts/${c.id}`, { method: "DELETE", key: k.key })).status).toBe(200);
    expect((await api(`/api/contacts/${c.id}`, { key: k.key })).status).toBe(404);
    const ev = await waitFor(() => eventsOf(k.accountId, "contact.created")[0], 10_000, "contact.created");
    expect(ev.data).toEqual(c);
  });

  it("filters by tag, search and opt-out, with cursor pagination", async () => {
    const k = await createKey("pro");
    const mk = (phone: string, name: string, tags: string[], optedOut = false) => api("/api/contacts", { method: "POST", key: k.key, json: { phone, name, tags, optedOut } });
    await mk("+14155550201", "Alice Smith", ["vip", "eu"]);
    await mk("+14155550202", "Bob Jones", ["eu"]);
    await mk("+14155550203", "Carol Smith", ["vip"], true);
    await mk("+442071230000", "Dan 100%_", []);
    const list = async (q: string) => (await json<{ data: ContactJson[]; nextCursor: string | null }>(await api(`/api/contacts?${q}`, { key: k.key })));
    expect((await list("tag=vip")).data.map((c) => c.name)).toEqual(["Carol Smith", "Alice Smith"]);
    expect((await list("q=smith")).data.map((c) => c.name)).toEqual(["Carol Smith", "Alice Smith"]);
    expect((await list("q=44207")).data.map((c) => c.name)).toEqual(["Dan 100%_"]);
    expect((await list("q=%25_")).data.map((c) => c.name)).toEqual(["Dan 100%_"]);
    expect((await list("optedOut=true")).data.map((c) => c.name)).toEqual(["Carol Smith"]);
    expect((await list("tag=vip&optedOut=false")).data.map((c) => c.name)).toEqual(["Alice Smith"]);
    const p1 = await list("limit=3");
    expect(p1.data).toHaveLength(3);
    const p2 = await list(`limit=3&cursor=${p1.nextCursor}`);
    expect(p2.data.map((c) => c.name)).toEqual(["Alice Smith"]);
    expect(p2.nextCursor).toBeNull();
  });
});
