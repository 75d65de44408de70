import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { constants as zlibConstants, inflateSync } from "node:zlib";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer, type RunningServer, type StartOptions } from "../src/server.ts";
import { jobsDir } from "../src/workdir.ts";

export const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures");
export const fixture = (name: string) => readFileSync(path.join(FIXTURES, name), "utf8");

export function doc(body: string, preamble = ""): string {
  return `\\documentclass{article}\n${preamble}\\begin{document}\n${body}\n\\end{document}\n`;
}

/** A server with small pools and tight limits so hostile tests end quickly. */
export function testServer(opts: StartOptions = {}): Promise<RunningServer> {
  return startServer({
    port: 0,
    host: "127.0.0.1",
    env: {},
    ...opts,
    poolSize: { pdflatex: 2, xelatex: 1, lualatex: 1, ...(opts.poolSize ?? {}) },
    limits: {
      defaultTimeoutMs: 20_000,
      maxTimeoutMs: 30_000,
      maxOutputFileBytes: 16 * 1024 * 1024,
      maxJobDirBytes: 40 * 1024 * 1024,
      ...(opts.limits ?? {}),
    } as never,
  });
}

export interface Result {
  status: number;
  headers: Headers;
  body: Buffer;
  json?: any;
}

export async function compile(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Result> {
  const r = await fetch(`${url}/compile`, {
    method: "POST",
    // a connection per compile: the server closes idle ones after 5 s, and a test process busy with
    // other tests' work can reuse one just as it closes (the request then fails with ECONNRESET)
    headers: { "content-type": "application/json", connection: "close", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const buf = Buffer.from(await r.arrayBuffer());
  const json = (r.headers.get("content-type") ?? "").includes("json") ? JSON.parse(buf.toString()) : undefined;
  return { status: r.status, headers: r.headers, body: buf, json };
}

export function pdfText(pdf: Buffer): string {
  const r = spawnSync("pdftotext", ["-layout", "-", "-"], { input: pdf, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`pdftotext failed: ${r.stderr}`);
  return r.stdout;
}

/**
 * Everything a PDF could carry a leaked file in: its text (pdftotext), its raw
 * bytes, and every Flate-compressed stream inflated (xdvipdfmx compresses embedded
 * file streams, so a leak is invisible in the raw bytes and the page text).
 */
export function pdfAllText(pdf: Buffer): string {
  const parts = [pdf.toString("latin1")];
  try {
    parts.push(pdfText(pdf));
  } catch {
    /* not a parsable PDF: raw bytes only */
  }
  const raw = pdf.toString("latin1");
  const re = /stream\r?\n/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(raw))) {
    const start = m.index + m[0].length;
    const end = raw.indexOf("endstream", start);
    if (end < 0) break;
    try {
      parts.push(inflateSync(pdf.subarray(start, end)).toString("latin1"));
    } catch {
      /* not Flate, or trailing bytes */
      try {
        parts.push(inflateSync(pdf.subarray(start, end), { finishFlush: zlibConstants.Z_SYNC_FLUSH }).toString("latin1"));
      } catch {
        /* not compressed */
      }
    }
    re.lastIndex = end + "endstream".length;
  }
  return parts.join("\n");
}

export function pdfPages(pdf: Buffer): number {
  const r = spawnSync("pdfinfo", ["-"], { input: pdf, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`pdfinfo failed: ${r.stderr}`);
  return Number(/^Pages:\s+(\d+)/m.exec(r.stdout)?.[1]);
}

export function expectPdf(r: Result): void {
  if (r.status !== 200) throw new Error(`expected a PDF, got ${r.status}: ${r.body.toString().slice(0, 2000)}`);
  if (r.body.subarray(0, 5).toString() !== "%PDF-") throw new Error("body is not a PDF");
}

/** Polls `s`'s jobs folder (as the server sees it) for the job directory holding `name`. */
export async function findJobDir(s: { config: { jobRoot: string } }, name: string, timeoutMs = 10_000): Promise<string> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    for (const d of readdirSync(jobsDir(s.config))) {
      const p = path.join(jobsDir(s.config), d);
      if (existsSync(path.join(p, name))) return p;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no job directory with ${name}`);
}
