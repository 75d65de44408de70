import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { cancelJob, finishJob, renewLease } from "../../../src/compile/jobs.ts";
import { getDb } from "../../../src/db/client.ts";
import { compileJobs } from "../../../src/db/schema/index.ts";
import { api, createKey, errorOf } from "../helpers.ts";
import { cancel, events, LOOP, runningJob } from "./cancel-events.support.ts";
import { insertJob, type JobBody } from "./helpers.ts";

describe("cancel and events: accounts are adversaries", () => {
  it("another account's key gets 404 for cancel and events, and the job goes on running", async () => {
    const owner = await createKey("pro");
    const other = await createKey("pro");
    const { id, stream } = await runningJob(owner.key, LOOP("iso"));
    try {
      const c = await cancel(other.key, id);
      expect(c.status).toBe(404);
      expect((await errorOf(c)).code).toBe("not_found");
      const e = await events(other.key, id);
      expect(e.status).toBe(404);
      expect(e.headers.get("content-type")).toMatch(/^application\/json/);
      const job = (await (await api(`/v1/compile/jobs/${id}`, { key: owner.key })).json()) as JobBody;
      expect(job.status).toBe("running");
    } finally {
      expect((await cancel(owner.key, id)).status).toBe(200);
      await stream.cancel();
    }
  });

  it("without a key: 401 for both", async () => {
    expect((await api("/v1/compile/jobs/job_x", { method: "DELETE" })).status).toBe(401);
    expect((await api("/v1/compile/jobs/job_x/events")).status).toBe(401);
  });

  it("a consumer that still runs a cancelled job cannot store or finish its result", async () => {
    const k = await createKey("pro");
    const now = Date.now();
    const id = await insertJob(env, k.accountId, LOOP("fence"), { status: "running", attempt: 1, leaseExpiresAt: now + 60_000, startedAt: now });
    const db = getDb(env.DB);
    expect(await cancelJob(db, k.accountId, id, now)).toMatchObject({ status: "cancelled" });
    expect(await renewLease(db, id, 1, now, 60_000)).toBe(false);
    expect(await finishJob(db, id, 1, { status: "succeeded", durationMs: 1, pages: 1, sizeBytes: 1 }, now)).toBeNull();
    expect((await db.select().from(compileJobs).where(eq(compileJobs.id, id)).get())?.status).toBe("cancelled");
  });

  it("cancelJob is scoped by account: another account's id changes nothing", async () => {
    const owner = await createKey("pro");
    const other = await createKey("pro");
    const id = await insertJob(env, owner.accountId, LOOP("scope"));
    const db = getDb(env.DB);
    expect(await cancelJob(db, other.accountId, id, Date.now())).toBeNull();
    expect((await db.select().from(compileJobs).where(eq(compileJobs.id, id)).get())?.status).toBe("queued");
  });
});
