// What a compile answers besides the PDF: pages as PNG or SVG images, the full log, or a zip of
// the outputs. Converting the PDF is running a parser (poppler) on bytes the document chose, so
// pdftocairo runs like the engines: in the job's sandbox, as the job's uid, under its time and
// size caps (the caller's `run`). Answer shapes (docs/contracts.md): one page as the image
// itself, several as a zip of `page-<n>.<ext>`; `log` as text; `zip` as `<base>.pdf`, `<base>.log`
// and, with synctex, `<base>.synctex.gz`.
import type { WorkDir } from "./workdir.ts";
import { inFolder } from "./workdir.ts";
import { zip, type ZipEntry } from "./zip.ts";
import type { RunOutcome } from "./supervise.ts";
import { MAX_IMAGE_PAGES, type OutputSpec } from "./output-spec.ts";

export interface Output {
  contentType: string;
  body: Buffer;
  /** The pages rendered ("3-5"), for images. */
  pages?: string;
}

/** The pages to render of a document of `pages` pages; a string when none of them exists. */
export function pageRange(spec: OutputSpec, pages: number): { first: number; last: number } | string {
  if (spec.firstPage > pages) return `firstPage is ${spec.firstPage}, but the document has ${pages} page${pages === 1 ? "" : "s"}.`;
  const last = Math.min(pages, spec.lastPage ?? spec.firstPage + MAX_IMAGE_PAGES - 1);
  return { first: spec.firstPage, last };
}

export type OutputOutcome = { ok: true; output: Output } | { ok: false; code: "compile_error" | "output_too_large" | "page_out_of_range" | "limit"; message: string; ending?: Exclude<RunOutcome["ending"], "exit"> };

export interface OutputContext {
  work: WorkDir;
  /** The main file's folder ("" for the root), its job name, the PDF and its page count. */
  sub: string;
  base: string;
  pdf: Buffer;
  pages: number;
  /** All outputs of one answer together. */
  maxBytes: number;
  maxLogBytes: number;
  /** Runs a tool in the job's sandbox, in the main file's folder, under the job's caps. */
  run: (cmd: string, args: string[]) => Promise<RunOutcome & { output: string }>;
}

/** A name of the main file's folder as a tool's argument: never read as an option. */
const arg = (name: string) => `./${name}`;

/** The job's outputs as `spec` asks (not "pdf": the caller answers the PDF itself). */
export async function makeOutput(spec: OutputSpec, ctx: OutputContext): Promise<OutputOutcome> {
  const { work, sub, base } = ctx;
  const tooLarge = (): OutputOutcome => ({ ok: false, code: "output_too_large", message: `The ${spec.kind} output is larger than ${ctx.maxBytes} bytes.` });
  const log = async () => (await work.readFile(inFolder(sub, `${base}.log`), ctx.maxLogBytes)) ?? Buffer.alloc(0);
  if (spec.kind === "log") return { ok: true, output: { contentType: "text/plain; charset=utf-8", body: await log() } };
  if (spec.kind === "zip") {
    const entries: ZipEntry[] = [
      { name: `${base}.pdf`, data: ctx.pdf },
      { name: `${base}.log`, data: await log(), deflate: true },
    ];
    if (spec.synctex) {
      const sync = await work.readFile(inFolder(sub, `${base}.synctex.gz`), ctx.maxBytes + 1);
      if (sync) entries.push({ name: `${base}.synctex.gz`, data: sync });
    }
    if (entries.reduce((n, e) => n + e.data.length, 0) > ctx.maxBytes) return tooLarge();
    return { ok: true, output: { contentType: "application/zip", body: zip(entries) } };
  }
  const range = pageRange(spec, ctx.pages);
  if (typeof range === "string") return { ok: false, code: "page_out_of_range", message: range };
  const ext = spec.kind;
  const images: ZipEntry[] = [];
  let total = 0;
  for (let p = range.first; p <= range.last; p++) {
    // one page per run: pdftocairo's SVG holds one page per file, and the names are then ours
    const target = `${base}.texpool-page-${p}`;
    const args = ext === "png" ? ["-png", "-r", String(spec.dpi), "-singlefile"] : ["-svg"];
    const file = ext === "png" ? `${target}.png` : `${target}.svg`;
    const r = await ctx.run("pdftocairo", [...args, "-f", String(p), "-l", String(p), arg(`${base}.pdf`), arg(ext === "png" ? target : file)]);
    if (r.ending !== "exit") return { ok: false, code: "limit", message: "pdftocairo", ending: r.ending };
    if (r.code !== 0) return { ok: false, code: "compile_error", message: `Page ${p} could not be converted to ${ext.toUpperCase()}: ${r.output.trim().split("\n")[0] ?? ""}`.trim() };
    const data = await work.readFile(inFolder(sub, file), ctx.maxBytes - total + 1);
    if (!data) return { ok: false, code: "compile_error", message: `Page ${p} could not be converted to ${ext.toUpperCase()}: no image was written.` };
    total += data.length;
    if (total > ctx.maxBytes) return tooLarge();
    images.push({ name: `page-${p}.${ext}`, data, deflate: ext === "svg" });
  }
  const pages = `${range.first}-${range.last}`;
  const contentType = ext === "png" ? "image/png" : "image/svg+xml";
  if (images.length === 1) return { ok: true, output: { contentType, body: images[0]!.data, pages } };
  return { ok: true, output: { contentType: "application/zip", body: zip(images), pages } };
}
