import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { handleCompileQueue, onCronCompile, runCompileJob } from "../../../src/compile/consumer.ts";
import { finishJob, jobInputKey, jobPdfKey, renewLease } from "../../../src/compile/jobs.ts";
import { MAX_JOB_ATTEMPTS } from "../../../src/compile/limits.ts";
import { getDb } from "../../../src/db/client.ts";
import { compileJobs } from "../../../src/db/schema/index.ts";
import { createKey } from "../helpers.ts";
import { HELLO, insertJob, recordingQueue, uniqueDoc } from "./helpers.ts";

const row = (id: string) => getDb(env.DB).select().from(compileJobs).where(eq(compileJobs.id, id)).get();

describe("compile queue consumer", () => {
  it("two deliveries of the same message at once run the job once", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, uniqueDoc("dup"));
    const body = { kind: "compile", jobId: id, accountId: k.accountId };
    const batch = createMessageBatch("texmsg-compile-jobs", [
      { id: "m1", timestamp: new Date(), attempts: 1, body },
      { id: "m2", timestamp: new Date(), attempts: 1, body },
    ]);
    const ctx = createExecutionContext();
    await handleCompileQueue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.sort()).toEqual(["m1", "m2"]);
    expect(result.retryMessages).toEqual([]);
    const job = await row(id);
    expect(job).toMatchObject({ status: "succeeded", attempt: 1 });
    expect(await env.FILES.head(jobPdfKey(k.accountId, id))).not.toBeNull();
    expect(await env.FILES.head(jobInputKey(k.accountId, id))).toBeNull();
  });

  it("a redelivered message for a finished job changes nothing", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, uniqueDoc("redeliver"));
    await runCompileJob(env, { jobId: id, accountId: k.accountId });
    const done = await row(id);
    await runCompileJob(env, { jobId: id, accountId: k.accountId });
    expect(await row(id)).toEqual(done);
  });

  it("a message for a job whose consumer still holds the lease does nothing", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, uniqueDoc("leased"), { status: "running", attempt: 1, leaseExpiresAt: Date.now() + 60_000, startedAt: Date.now() });
    await runCompileJob(env, { jobId: id, accountId: k.accountId });
    expect(await row(id)).toMatchObject({ status: "running", attempt: 1 });
  });

  it("a crashed consumer's job (lease expired) is re-queued by the cron and finishes on the next attempt", async () => {
    const k = await createKey("pro");
    const past = Date.now() - 1000;
    const id = await insertJob(env, k.accountId, uniqueDoc("crashed"), { status: "running", attempt: 1, leaseExpiresAt: past, requeueAt: past, startedAt: past - 5000 });
    const q = recordingQueue();
    await onCronCompile({ ...env, COMPILE_QUEUE: q.queue }, Date.now());
    expect(q.sent.map((s) => s.body)).toContainEqual({ kind: "compile", jobId: id, accountId: k.accountId });
    // The next sweep does not send it again right away.
    const again = recordingQueue();
    await onCronCompile({ ...env, COMPILE_QUEUE: again.queue }, Date.now());
    expect(again.sent.map((s) => (s.body as { jobId: string }).jobId)).not.toContain(id);

    await runCompileJob(env, { jobId: id, accountId: k.accountId });
    expect(await row(id)).toMatchObject({ status: "succeeded", attempt: 2, pages: 1 });
  });

  it("the cron re-sends a queued job whose message was lost", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, HELLO, { requeueAt: Date.now() - 1 });
    const q = recordingQueue();
    await onCronCompile({ ...env, COMPILE_QUEUE: q.queue }, Date.now());
    expect(q.sent.map((s) => s.body)).toContainEqual({ kind: "compile", jobId: id, accountId: k.accountId });
  });

  it("infrastructure failures are retried with a delay, then the job ends failed with the reason", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, uniqueDoc("infra"));
    const q = recordingQueue();
    const broken = { ...env, COMPILER_URL: "http://127.0.0.1:9", COMPILE_QUEUE: q.queue };
    for (let attempt = 1; attempt < MAX_JOB_ATTEMPTS; attempt++) {
      await runCompileJob(broken, { jobId: id, accountId: k.accountId });
      expect(await row(id)).toMatchObject({ status: "queued", attempt });
      expect(q.sent[attempt - 1]).toMatchObject({ body: { kind: "compile", jobId: id }, delaySeconds: expect.any(Number) });
      expect(q.sent[attempt - 1]!.delaySeconds).toBeGreaterThan(0);
    }
    await runCompileJob(broken, { jobId: id, accountId: k.accountId });
    const job = await row(id);
    expect(job).toMatchObject({ status: "failed", attempt: MAX_JOB_ATTEMPTS });
    expect(JSON.parse(job!.error!)).toMatchObject({ code: "compile_unavailable", message: expect.stringContaining("not reachable") });
    expect(q.sent).toHaveLength(MAX_JOB_ATTEMPTS - 1);
  });

  it("a storage failure after compiling is retried, not left running", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, uniqueDoc("r2-down"));
    const q = recordingQueue();
    const files = new Proxy(env.FILES, {
      get(target, prop) {
        if (prop === "put") return async (key: string, ...rest: unknown[]) => {
          if (key.endsWith(".pdf")) throw new Error("R2 unavailable");
          return (target.put as (...a: unknown[]) => unknown)(key, ...rest);
        };
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    await runCompileJob({ ...env, FILES: files, COMPILE_QUEUE: q.queue }, { jobId: id, accountId: k.accountId });
    expect(await row(id)).toMatchObject({ status: "queued", attempt: 1, leaseExpiresAt: null });
    expect(q.sent).toHaveLength(1);
    await runCompileJob(env, { jobId: id, accountId: k.accountId });
    expect(await row(id)).toMatchObject({ status: "succeeded", attempt: 2 });
  });

  it("a job that keeps crashing its consumer ends failed instead of running forever", async () => {
    const k = await createKey("pro");
    const past = Date.now() - 1000;
    const id = await insertJob(env, k.accountId, uniqueDoc("crashloop"), { status: "running", attempt: MAX_JOB_ATTEMPTS, leaseExpiresAt: past, requeueAt: past });
    await runCompileJob(env, { jobId: id, accountId: k.accountId });
    const job = await row(id);
    expect(job!.status).toBe("failed");
    expect(JSON.parse(job!.error!).code).toBe("compile_unavailable");
  });

  it("a late consumer whose lease was taken over cannot finish the job", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, HELLO, { status: "running", attempt: 2, leaseExpiresAt: Date.now() + 60_000 });
    const late = await finishJob(getDb(env.DB), id, 1, { status: "failed", error: { code: "compile_error", message: "stale" } }, Date.now());
    expect(late).toBeNull();
    expect(await row(id)).toMatchObject({ status: "running", attempt: 2, error: null });
    const current = await finishJob(getDb(env.DB), id, 2, { status: "succeeded", durationMs: 5, pages: 1, sizeBytes: 10 }, Date.now());
    expect(current).toMatchObject({ status: "succeeded" });
    // And once finished, no attempt moves it again.
    expect(await finishJob(getDb(env.DB), id, 2, { status: "failed", error: { code: "x", message: "y" } }, Date.now())).toBeNull();
  });

  it("a consumer whose lease ran out while compiling may not store its PDF", async () => {
    const k = await createKey("pro");
    const now = Date.now();
    const expired = await insertJob(env, k.accountId, HELLO, { status: "running", attempt: 1, leaseExpiresAt: now - 1 });
    expect(await renewLease(getDb(env.DB), expired, 1, now, 60_000)).toBe(false);
    const live = await insertJob(env, k.accountId, HELLO, { status: "running", attempt: 1, leaseExpiresAt: now + 1000 });
    expect(await renewLease(getDb(env.DB), live, 2, now, 60_000)).toBe(false); // not this attempt's
    expect(await renewLease(getDb(env.DB), live, 1, now, 60_000)).toBe(true);
    expect((await row(live))!.leaseExpiresAt).toBe(now + 60_000);
  });

  it("unknown messages are acknowledged and dropped", async () => {
    const batch = createMessageBatch("texmsg-compile-jobs", [{ id: "junk", timestamp: new Date(), attempts: 1, body: { hello: "world" } }]);
    const ctx = createExecutionContext();
    await handleCompileQueue(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["junk"]);
  });
});
