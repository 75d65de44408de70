import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { runCompileJob } from "../../../src/compile/consumer.ts";
import { jobInputKey, jobPdfKey } from "../../../src/compile/jobs.ts";
import { api, createKey, errorOf } from "../helpers.ts";
import { cancel, events, LOOP, readAll, runningJob, serverHealth, TWO_PASSES } from "./cancel-events.support.ts";
import { insertJob, type JobBody, receivedAt, receiverUrl, submit, waitForJob } from "./helpers.ts";

describe("DELETE /v1/compile/jobs/{id}", () => {
  it("stops a running job at once: cancelled, its compile slot free on the server, no PDF ever", async () => {
    const k = await createKey("pro");
    const { id, stream } = await runningJob(k.key, LOOP("cancel-running"));
    const t = Date.now();
    const res = await cancel(k.key, id);
    expect(res.status).toBe(200);
    const job = (await res.json()) as JobBody;
    expect(Date.now() - t).toBeLessThan(3000);
    expect(job).toMatchObject({ id, status: "cancelled" });
    // the answer came once the server had stopped it: nothing of this job holds a slot there
    const { jobs } = await serverHealth();
    expect(jobs.active).toBeLessThanOrEqual(1); // another test file's compile may be running
    expect((await stream.until("done"))?.data).toMatchObject({ id, status: "cancelled" });
    expect(stream.seen.map((e) => e.event)).toContain("cancelled");

    // the consumer's attempt ends without touching the row
    const later = await waitForJob(k.key, id, 3000, () => false);
    expect(later.status).toBe("cancelled");
    const pdf = await api(`/v1/compile/jobs/${id}/pdf`, { key: k.key });
    expect(pdf.status).toBe(409);
    expect((await errorOf(pdf)).code).toBe("job_cancelled");
    expect(await env.FILES.head(jobPdfKey(k.accountId, id))).toBeNull();
    expect(await env.FILES.head(jobInputKey(k.accountId, id))).toBeNull();
  });

  it("a queued job never runs; a repeat of the cancel answers the cancelled job again", async () => {
    const k = await createKey("pro");
    const id = await insertJob(env, k.accountId, LOOP("queued"));
    const res = await cancel(k.key, id);
    expect(res.status).toBe(200);
    expect(((await res.json()) as JobBody).status).toBe("cancelled");
    await runCompileJob(env, { jobId: id, accountId: k.accountId });
    const job = (await (await api(`/v1/compile/jobs/${id}`, { key: k.key })).json()) as JobBody;
    expect(job).toMatchObject({ status: "cancelled", attempts: 0 });
    const again = await cancel(k.key, id);
    expect(again.status).toBe(200);
    expect(((await again.json()) as JobBody).status).toBe("cancelled");
    const list = (await (await api("/v1/compile/jobs?status=cancelled", { key: k.key })).json()) as { data: JobBody[] };
    expect(list.data.map((j) => j.id)).toContain(id);
  });

  it("the callback receives compile.job.cancelled", async () => {
    const k = await createKey("pro");
    const path = `/cb-cancel-${crypto.randomUUID()}`;
    const { id } = await runningJob(k.key, LOOP("cancel-callback"), { callbackUrl: `${receiverUrl()}${path}` });
    expect((await cancel(k.key, id)).status).toBe(200);
    let got: Awaited<ReturnType<typeof receivedAt>> = [];
    for (const end = Date.now() + 10_000; got.length === 0 && Date.now() < end; ) {
      await new Promise((r) => setTimeout(r, 100));
      got = await receivedAt(path);
    }
    expect(got).toHaveLength(1);
    const body = JSON.parse(got[0]!.body) as { type: string; data: JobBody };
    expect(body.type).toBe("compile.job.cancelled");
    expect(body.data).toMatchObject({ id, status: "cancelled" });
    expect((await waitForJob(k.key, id, 5000, (j) => j.callbackStatus === "delivered")).callbackStatus).toBe("delivered");
  });
});

describe("GET /v1/compile/jobs/{id}/events", () => {
  it("streams the job's passes, log lines and tools, then done with the final record", async () => {
    const k = await createKey("pro");
    const created = (await (await submit(k.key, { source: TWO_PASSES("events") })).json()) as JobBody;
    const res = await events(k.key, created.id);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const all = await readAll(res);
    const types = all.map((e) => e.event);
    expect(all.filter((e) => e.event === "pass").map((e) => e.data.pass)).toEqual([1, 2]);
    expect(all.some((e) => e.event === "log" && String(e.data.line).includes("progress-marker"))).toBe(true);
    expect(all.find((e) => e.event === "result")?.data).toMatchObject({ ok: true, pages: 1, passes: 2 });
    expect(types.at(-1)).toBe("done");
    expect(all.at(-1)!.data).toMatchObject({ id: created.id, status: "succeeded", pages: 1 });
    // the compiler's events carry ids <attempt>.<n>, in order
    const ids = all.filter((e) => e.id).map((e) => e.id!);
    expect(ids.every((i) => /^1\.\d+$/.test(i))).toBe(true);
    const seqs = ids.map((i) => Number(i.split(".")[1]));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));

    // a finished job answers done at once, whatever Last-Event-ID says
    const again = await readAll(await events(k.key, created.id, { "Last-Event-ID": ids[1]! }));
    expect(again).toEqual([{ event: "done", data: expect.objectContaining({ id: created.id, status: "succeeded" }) }]);
  });

  it("a reconnect with Last-Event-ID goes on after the last event received", async () => {
    const k = await createKey("pro");
    const { id, stream } = await runningJob(k.key, LOOP("reconnect"));
    const lastId = stream.seen.filter((e) => e.id).at(-1)!.id!;
    await stream.cancel();
    const res = await events(k.key, id, { "Last-Event-ID": lastId });
    const after = (await import("./cancel-events.support.ts")).sseReader(res);
    // the cancel ends the server's stream: what came after the reconnect point, and nothing before it
    setTimeout(() => void cancel(k.key, id), 300);
    expect(await after.until("done")).toBeDefined();
    const seqs = after.seen.filter((e) => e.id).map((e) => Number(e.id!.split(".")[1]));
    expect(seqs.length).toBeGreaterThan(0);
    expect(Math.min(...seqs)).toBeGreaterThan(Number(lastId.split(".")[1]));
  });
});
