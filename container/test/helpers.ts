import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer, type RunningServer, type StartOptions } from "../src/server.ts";

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
      ...({} as never),
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
    headers: { "content-type": "application/json", ...headers },
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

export function pdfPages(pdf: Buffer): number {
  const r = spawnSync("pdfinfo", ["-"], { input: pdf, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`pdfinfo failed: ${r.stderr}`);
  return Number(/^Pages:\s+(\d+)/m.exec(r.stdout)?.[1]);
}

export function expectPdf(r: Result): void {
  if (r.status !== 200) throw new Error(`expected a PDF, got ${r.status}: ${r.body.toString().slice(0, 2000)}`);
  if (r.body.subarray(0, 5).toString() !== "%PDF-") throw new Error("body is not a PDF");
}
