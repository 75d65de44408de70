import { sha256Hex } from "../platform/crypto.ts";
import { type CompileInput, sleep } from "./compiler.ts";
import { DEFAULT_MAIN_PATH, type Engine } from "./schemas.ts";
import { DEFAULT_DPI } from "../../container/src/output-spec.ts";

/**
 * Content-addressed cache of successful compiles in R2 (`cache/<key>.pdf`). Entries are scoped to
 * the account: a shared cache would let one account learn, from `X-Cache`, whether another compiled
 * a given document. Expiry: `expiresAt` in the object's custom metadata, checked on every read (an
 * R2 lifecycle rule on `cache/` deletes the objects themselves; see the README's deploy steps).
 */
const VERSION = "compile-cache/v2";

/**
 * sha256 over a canonical encoding: a JSON array (fixed order, no object keys) of the version,
 * account, engine, main file path, draft flag, source and the files sorted by path (`mainPath` and
 * `draft` with their defaults filled in, so leaving them out and giving the defaults are one key),
 * and a last element "shellEscape" only when it is on (so keys without it stay as they were).
 * `timeoutMs` is left out: it does not change a successful result.
 */
export async function cacheKey(accountId: string, input: CompileInput): Promise<string> {
  const files = [...(input.files ?? [])].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)).map((f) => [f.path, f.encoding, f.content]);
  return sha256Hex(JSON.stringify([VERSION, accountId, input.engine, input.mainPath ?? DEFAULT_MAIN_PATH, input.draft === true, input.source, files, ...(input.shellEscape ? ["shellEscape"] : []), ...outputKey(input)]));
}

/**
 * The output fields in a key, only when not the defaults (so a PDF's key stays as it was): the
 * output with its defaults filled in ("png" and "png" at 150 dpi from page 1 are one key), and
 * "keepGoing" for haltOnError: false.
 */
function outputKey(input: CompileInput): unknown[] {
  const out: unknown[] = [];
  if (input.output) {
    const images = input.output === "png" || input.output === "svg";
    out.push(["output", input.output, input.output === "png" ? (input.dpi ?? DEFAULT_DPI) : null, images ? (input.firstPage ?? 1) : null, images ? (input.lastPage ?? null) : null, input.synctex === true]);
  }
  if (input.haltOnError === false) out.push("keepGoing");
  return out;
}

const objectKey = (key: string) => `cache/${key}.pdf`;

export interface CachedPdf extends OutputInfo {
  body: ReadableStream | ArrayBuffer;
  size: number;
  engine: Engine;
  pages: number | null;
}

/** What a cached answer says besides its bytes: its type, and for outputs other than the PDF what the compile said of them. */
export interface OutputInfo {
  contentType: string;
  outputPages?: string | undefined;
  errorCount?: number | undefined;
}

/** The output information of a compile or a cached answer (without its other fields). */
export function outputInfo(o: OutputInfo): OutputInfo {
  const info: OutputInfo = { contentType: o.contentType };
  if (o.outputPages) info.outputPages = o.outputPages;
  if (o.errorCount) info.errorCount = o.errorCount;
  return info;
}

function infoOf(meta: Record<string, string>, contentType: string | undefined): OutputInfo {
  const info: OutputInfo = { contentType: contentType ?? "application/pdf" };
  if (meta.outputPages) info.outputPages = meta.outputPages;
  if (Number(meta.errorCount) > 0) info.errorCount = Number(meta.errorCount);
  return info;
}

/**
 * A small in-isolate copy of recent small results in front of R2: a repeat served by the same isolate
 * skips the R2 read (milliseconds locally, tens of milliseconds deployed). Same keys and expiry as R2,
 * so it can only answer what R2 would.
 */
const MEMORY_ITEM_MAX = 512 * 1024;
const MEMORY_TOTAL_MAX = 24 * 1024 * 1024;
const memory = new Map<string, { pdf: ArrayBuffer; engine: Engine; pages: number | null; expiresAt: number; info: OutputInfo }>();
let memoryBytes = 0;

function remember(key: string, pdf: ArrayBuffer, engine: Engine, pages: number | null, expiresAt: number, info: OutputInfo): void {
  if (pdf.byteLength > MEMORY_ITEM_MAX || memory.has(key)) return;
  // Own copy: the caller's buffer goes on to a Response or R2, which may take it over.
  memory.set(key, { pdf: pdf.slice(0), engine, pages, expiresAt, info });
  memoryBytes += pdf.byteLength;
  // Map iteration order is insertion order: drop the oldest until within budget.
  for (const [k, v] of memory) {
    if (memoryBytes <= MEMORY_TOTAL_MAX) break;
    memory.delete(k);
    memoryBytes -= v.pdf.byteLength;
  }
}

/** Tests: forget the in-isolate copies, so the next read goes to R2. */
export function clearMemoryCache(): void {
  memory.clear();
  memoryBytes = 0;
}

function recall(key: string, now: number): CachedPdf | null {
  const m = memory.get(key);
  if (!m) return null;
  if (m.expiresAt <= now) {
    memory.delete(key);
    memoryBytes -= m.pdf.byteLength;
    return null;
  }
  return { body: m.pdf.slice(0), size: m.pdf.byteLength, engine: m.engine, pages: m.pages, ...m.info };
}

export async function readCache(bucket: R2Bucket, key: string, now = Date.now()): Promise<CachedPdf | null> {
  const mem = recall(key, now);
  if (mem) return mem;
  const obj = await bucket.get(objectKey(key));
  if (!obj) return null;
  const meta = obj.customMetadata ?? {};
  if (!(Number(meta.expiresAt) > now)) {
    await obj.body.cancel();
    return null;
  }
  const pages = meta.pages ? Number(meta.pages) : null;
  const info = infoOf(meta, obj.httpMetadata?.contentType);
  if (obj.size <= MEMORY_ITEM_MAX) {
    const pdf = await obj.arrayBuffer();
    remember(key, pdf, meta.engine as Engine, pages, Number(meta.expiresAt), info);
    return { body: pdf, size: obj.size, engine: meta.engine as Engine, pages, ...info };
  }
  return { body: obj.body, size: obj.size, engine: meta.engine as Engine, pages, ...info };
}

/**
 * Remembers the PDF in the isolate at once and stores it in R2 `delayMs` later: a sync compile's
 * response should be on its way before the write competes with it (under `wrangler dev` the local
 * R2 shares the Worker's thread; a MISS got ~3 ms slower when the write started at once).
 */
export async function writeCache(bucket: R2Bucket, key: string, pdf: ArrayBuffer, info: { engine: Engine; pages: number | null; ttlSeconds: number; now?: number; delayMs?: number; output?: OutputInfo }): Promise<void> {
  const now = info.now ?? Date.now();
  const output = info.output ?? { contentType: "application/pdf" };
  remember(key, pdf, info.engine, info.pages, now + info.ttlSeconds * 1000, output);
  if (info.delayMs) await sleep(info.delayMs);
  await bucket.put(objectKey(key), pdf, {
    httpMetadata: { contentType: output.contentType },
    customMetadata: {
      engine: info.engine,
      pages: info.pages === null ? "" : String(info.pages),
      createdAt: String(now),
      expiresAt: String(now + info.ttlSeconds * 1000),
      ...(output.outputPages ? { outputPages: output.outputPages } : {}),
      ...(output.errorCount ? { errorCount: String(output.errorCount) } : {}),
    },
  });
}
