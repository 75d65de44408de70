import { inject } from "vitest";
import { api } from "../helpers.ts";

export const HELLO = "\\documentclass{article}\n\\begin{document}\nHello, world!\n\\end{document}\n";

/** A hello-world document that no other test compiles (so the cache starts cold). */
export function uniqueDoc(label = ""): string {
  return `% ${label} ${crypto.randomUUID()}\n${HELLO}`;
}

export function isPdf(bytes: ArrayBuffer): boolean {
  const head = new TextDecoder().decode(bytes.slice(0, 5));
  const tail = new TextDecoder().decode(bytes.slice(Math.max(0, bytes.byteLength - 32)));
  return head === "%PDF-" && tail.includes("%%EOF");
}

export function compileSync(key: string, json: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return api("/v1/compile/sync", { method: "POST", key, json, headers });
}

export function submit(key: string, json: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return api("/v1/compile/async", { method: "POST", key, json, headers });
}

export type JobBody = {
  id: string;
  status: string;
  engine: string;
  attempts: number;
  durationMs: number | null;
  pages: number | null;
  sizeBytes: number | null;
  error?: { code: string; message: string; line?: number | null; errors?: unknown[]; log?: string };
  statusUrl: string;
  pdfUrl: string;
  callbackStatus: string | null;
  callbackSecret?: string;
};

/** Polls the job until it is finished (or the time runs out). */
export async function waitForJob(key: string, id: string, timeoutMs = 20_000, until: (j: JobBody) => boolean = (j) => j.status === "succeeded" || j.status === "failed"): Promise<JobBody> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const job = (await (await api(`/v1/compile/jobs/${id}`, { key })).json()) as JobBody;
    if (until(job) || Date.now() > deadline) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const receiverUrl = () => inject("callbackReceiverUrl");

export async function receivedAt(path: string): Promise<Array<{ path: string; headers: Record<string, string>; body: string }>> {
  return (await (await fetch(`${receiverUrl()}/_received?path=${encodeURIComponent(path)}`)).json()) as Array<{ path: string; headers: Record<string, string>; body: string }>;
}

/** A job written straight to D1 and R2 without a queue message, for driving the consumer by hand. */
export async function insertJob(
  env: Env,
  accountId: string,
  source: string,
  overrides: Partial<typeof import("../../../src/db/schema/index.ts").compileJobs.$inferInsert> = {},
): Promise<string> {
  const { getDb } = await import("../../../src/db/client.ts");
  const { compileJobs } = await import("../../../src/db/schema/index.ts");
  const { jobInputKey } = await import("../../../src/compile/jobs.ts");
  const { newId } = await import("../../../src/platform/ids.ts");
  const id = newId("job");
  const now = Date.now();
  await env.FILES.put(jobInputKey(accountId, id), JSON.stringify({ engine: "pdflatex", source }));
  await getDb(env.DB)
    .insert(compileJobs)
    .values({ id, accountId, status: "queued", engine: "pdflatex", requeueAt: now + 300_000, createdAt: now, ...overrides });
  return id;
}

/** A stand-in COMPILE_QUEUE that records what would be sent. */
export function recordingQueue() {
  const sent: Array<{ body: unknown; delaySeconds?: number | undefined }> = [];
  const queue = {
    send: async (body: unknown, opts?: { delaySeconds?: number }) => void sent.push({ body, delaySeconds: opts?.delaySeconds }),
    sendBatch: async (msgs: Iterable<{ body: unknown; delaySeconds?: number }>) => {
      for (const m of msgs) sent.push({ body: m.body, delaySeconds: m.delaySeconds });
    },
  };
  return { queue: queue as unknown as Queue, sent };
}
