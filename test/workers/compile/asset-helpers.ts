import { env } from "cloudflare:workers";
import { api, type ApiInit, apiWith } from "../helpers.ts";

export const enc = new TextEncoder();

export async function sha256(bytes: Uint8Array | string): Promise<string> {
  const data = typeof bytes === "string" ? enc.encode(bytes) : bytes;
  return [...new Uint8Array(await crypto.subtle.digest("SHA-256", data as Uint8Array<ArrayBuffer>))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Uploads `content` under its own hash (or under `as`); the answer and the hash. */
export async function upload(key: string, content: Uint8Array | string, opts: { as?: string; overrides?: Partial<Env>; headers?: Record<string, string> } = {}): Promise<{ res: Response; hash: string }> {
  const bytes = typeof content === "string" ? enc.encode(content) : content;
  const hash = opts.as ?? (await sha256(bytes));
  const init: ApiInit = { method: "PUT", key, body: bytes, headers: { "Content-Type": "application/octet-stream", ...opts.headers } };
  const res = opts.overrides ? await apiWith(opts.overrides, `/v1/assets/${hash}`, init) : await api(`/v1/assets/${hash}`, init);
  return { res, hash };
}

/** A 1x1 PNG: binary bytes that are not UTF-8, which TeX reads as an image. */
export const DOT_PNG = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="), (c) => c.charCodeAt(0));

/** The row of an account's asset, straight from D1. */
export function assetRow(accountId: string, hash: string) {
  return env.DB.prepare("SELECT id, last_used_at, stored_at FROM compile_assets WHERE account_id = ? AND sha256 = ?").bind(accountId, hash).first<{ id: string; last_used_at: number; stored_at: number | null }>();
}

/** Moves an asset's last use back in time. */
export async function ageAsset(accountId: string, hash: string, lastUsedAt: number): Promise<void> {
  await env.DB.prepare("UPDATE compile_assets SET last_used_at = ? WHERE account_id = ? AND sha256 = ?").bind(lastUsedAt, accountId, hash).run();
}

/** A chapter whose `\newpage` makes a second page: the page count says the asset's bytes were read. */
export const chapter = (tag: string) => `\\section{Chapter ${tag}}\\newpage Second page.\n`;
export const mainDoc = (tag: string) => `\\documentclass{article}\\usepackage{graphicx}\\begin{document}${tag}\\input{chapters/one}\\includegraphics[width=1cm]{img/dot.png}\\end{document}`;
