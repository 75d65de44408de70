import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { api, createKey, errorOf } from "../helpers.ts";
import { cancel, events, readAll } from "./cancel-events.support.ts";
import { insertJob, type JobBody, submit, uniqueDoc, waitForJob } from "./helpers.ts";

describe("cancel and events: errors", () => {
  it("a succeeded or failed job cannot be cancelled: 409 job_finished, the job unchanged", async () => {
    const k = await createKey("pro");
    const ok = (await (await submit(k.key, { source: uniqueDoc("finished") })).json()) as JobBody;
    const bad = (await (await submit(k.key, { source: "\\documentclass{article}\\begin{document}\\undefinedmacro\\end{document}" })).json()) as JobBody;
    for (const [id, status] of [
      [ok.id, "succeeded"],
      [bad.id, "failed"],
    ] as const) {
      expect((await waitForJob(k.key, id)).status).toBe(status);
      const res = await cancel(k.key, id);
      expect(res.status).toBe(409);
      expect(await errorOf(res)).toMatchObject({ code: "job_finished", status });
      expect(((await (await api(`/v1/compile/jobs/${id}`, { key: k.key })).json()) as JobBody).status).toBe(status);
    }
    expect((await api(`/v1/compile/jobs/${ok.id}/pdf`, { key: k.key })).status).toBe(200);
  });

  it("an unknown id is 404 for both; an id past 64 characters is 400", async () => {
    const k = await createKey("pro");
    for (const res of [await cancel(k.key, "job_doesnotexist"), await events(k.key, "job_doesnotexist")]) {
      expect(res.status).toBe(404);
      expect((await errorOf(res)).code).toBe("not_found");
    }
    const long = `job_${"x".repeat(80)}`;
    expect((await cancel(k.key, long)).status).toBe(400);
    expect((await events(k.key, long)).status).toBe(400);
  });

  it("a malformed or hostile Last-Event-ID is ignored (the stream starts from the beginning); one past 40 characters is 400", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, uniqueDoc("lei"), { status: "failed", error: JSON.stringify({ code: "compile_error", message: "x" }), completedAt: Date.now() });
    for (const h of ["abc", "-1.-1", "99999999999.1", "1.1 event: x", "1.1;2", "1.99999999999"]) {
      const res = await events(k.key, id, { "Last-Event-ID": h });
      expect(res.status, h).toBe(200);
      expect((await readAll(res)).map((e) => e.event)).toEqual(["done"]);
    }
    const res = await events(k.key, id, { "Last-Event-ID": "1".repeat(41) });
    expect(res.status).toBe(400);
  });

  it("another method on the events path is 405/404 JSON, never a stream", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, uniqueDoc("method"));
    const res = await api(`/v1/compile/jobs/${id}/events`, { key: k.key, method: "DELETE" });
    expect([404, 405]).toContain(res.status);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  });
});
