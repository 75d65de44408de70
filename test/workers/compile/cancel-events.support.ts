import { inject } from "vitest";
import { api } from "../helpers.ts";
import { type JobBody, submit, uniqueDoc } from "./helpers.ts";

/** A document whose first pass never ends (TeX loops until it is killed). */
export const LOOP = (label: string) => `% ${label} ${crypto.randomUUID()}\n\\documentclass{article}\n\\begin{document}\n\\def\\x{\\x}\\x\n\\end{document}\n`;
/** Two passes (the table of contents), with a line of our own in the log. */
export const TWO_PASSES = (label: string) => `% ${label} ${crypto.randomUUID()}\n\\documentclass{article}\n\\begin{document}\n\\tableofcontents\\section{One}\\section{Two}\\typeout{progress-marker}\n\\end{document}\n`;

export type Sse = { id?: string; event: string; data: any };

function parseBlock(b: string): Sse | undefined {
  if (!b.trim() || b.startsWith(":")) return undefined;
  const f: Record<string, string> = {};
  for (const line of b.split("\n")) {
    const i = line.indexOf(": ");
    if (i > 0) f[line.slice(0, i)] = line.slice(i + 2);
  }
  return { ...(f.id ? { id: f.id } : {}), event: f.event!, data: JSON.parse(f.data!) };
}

/** Every event of an SSE answer, until it ends. */
export async function readAll(res: Response): Promise<Sse[]> {
  return (await res.text()).split("\n\n").map(parseBlock).filter((e): e is Sse => e !== undefined);
}

/** Reads an SSE answer event by event. */
export function sseReader(res: Response) {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  const seen: Sse[] = [];
  return {
    seen,
    /** Reads until an event of `type` (returned), or the stream's end (undefined). */
    async until(type: string): Promise<Sse | undefined> {
      for (;;) {
        let end: number;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const e = parseBlock(buf.slice(0, end));
          buf = buf.slice(end + 2);
          if (e) {
            seen.push(e);
            if (e.event === type) return e;
          }
        }
        const { done, value } = await reader.read();
        if (done) return undefined;
        buf += value;
      }
    },
    cancel: () => reader.cancel(),
  };
}

export const events = (key: string, id: string, headers: Record<string, string> = {}) => api(`/v1/compile/jobs/${id}/events`, { key, headers });
export const cancel = (key: string, id: string) => api(`/v1/compile/jobs/${id}`, { key, method: "DELETE" });

/** Submits `source` as an async job and waits until its first TeX pass runs (read from its events). */
export async function runningJob(key: string, source: string, extra: Record<string, unknown> = {}): Promise<{ id: string; stream: ReturnType<typeof sseReader>; created: JobBody }> {
  const created = (await (await submit(key, { source, timeoutMs: 30_000, ...extra })).json()) as JobBody;
  const res = await events(key, created.id);
  if (res.status !== 200) throw new Error(`events: ${res.status}`);
  const stream = sseReader(res);
  if (!(await stream.until("pass"))) throw new Error(`no pass event: ${JSON.stringify(stream.seen)}`);
  return { id: created.id, stream, created };
}

/** The compile server's own view: its jobs in compile slots. */
export async function serverHealth(): Promise<{ jobs: { active: number; queued: number } }> {
  return (await (await fetch(`${inject("compilerUrl")}/healthz`)).json()) as { jobs: { active: number; queued: number } };
}

export { uniqueDoc };
