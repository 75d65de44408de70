// References that do not change between runs unless TeX or the document does, kept as golden data
// keyed like corpus-golden.json by the TeX installation's identity and, per document, by a hash of
// its input: preamble-golden.json, the reference side of preamble-corpus.test.ts (each edited
// pdflatex corpus document compiled through the server without a namespace, i.e. no precompiled
// preamble; PREAMBLE_GOLDEN=update recomputes all), preamble-cases-golden.json, the same for the
// cases of preamble.test.ts (each document as given and edited), and projects-golden.json, the bare engine's
// outcome per project of projects-corpus.test.ts (PROJECTS_GOLDEN=update). A different identity, a
// changed document or one not in the file yet is computed again inside its test.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { texIdentity } from "./corpus-golden.ts";
import { compile, pdfPages, pdfText, type Result } from "./helpers.ts";

export const PREAMBLE_GOLDEN_FILE = path.join(import.meta.dirname, "preamble-golden.json");
export const PREAMBLE_CASES_GOLDEN_FILE = path.join(import.meta.dirname, "preamble-cases-golden.json");
export const PROJECTS_GOLDEN_FILE = path.join(import.meta.dirname, "projects-golden.json");

/** What the tests compare: the status, and the PDF's pages and text or the error's cause. */
export interface Reference {
  status: number;
  pages?: number;
  text?: string;
  cause?: { code: unknown; message: unknown; file: unknown; line: unknown };
}

interface Golden<T> {
  identity: string;
  docs: Record<string, { hash: string; ref: T }>;
}

export const bodyHash = (body: unknown): string => createHash("sha256").update(JSON.stringify(body)).digest("hex");

function load<T>(file: string, update: boolean, identity: string): Golden<T> {
  if (update || !existsSync(file)) return { identity, docs: {} };
  const stored = JSON.parse(readFileSync(file, "utf8")) as Golden<T>;
  return stored.identity === identity ? stored : { identity, docs: {} };
}

/**
 * The store in `file` (`update`: recompute every one): `reference(name, input, compute)` gives the
 * stored reference where the identity and the input's hash match, else runs `compute` and remembers
 * its result where `keep` says it is a real answer (a 5xx or a queue timeout fails its test now and
 * must not become the next run's reference); `save(names)` writes the file back when anything was
 * recomputed, keeping the names given (all of the corpus) or, for a partial run, every stored one.
 */
export function goldenRefs<T>(
  file: string,
  update: boolean,
  partial: boolean,
  keep: (ref: T) => boolean,
): {
  reference(name: string, input: unknown, compute: () => Promise<T>): Promise<{ ref: T; stored: boolean }>;
  save(names: string[]): string[];
} {
  const identity = texIdentity();
  const golden = load<T>(file, update, identity);
  const recomputed: string[] = [];
  return {
    async reference(name, input, compute) {
      const hash = bodyHash(input);
      const stored = golden.docs[name];
      if (stored?.hash === hash) return { ref: stored.ref, stored: true };
      const ref = await compute();
      if (keep(ref)) {
        golden.docs[name] = { hash, ref };
        recomputed.push(name);
      }
      return { ref, stored: false };
    },
    save(names) {
      if (recomputed.length === 0) return recomputed;
      const kept = partial ? Object.keys(golden.docs) : names.filter((n) => golden.docs[n]);
      const docs = Object.fromEntries(kept.sort().map((n) => [n, golden.docs[n]!]));
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify({ identity, docs }, null, 1)}\n`);
      renameSync(tmp, file);
      return recomputed;
    },
  };
}

/** preamble-corpus.test.ts's references: a 200 or a 422 is the document's own answer. */
export const preambleGolden = (partial: boolean) =>
  goldenRefs<Reference>(PREAMBLE_GOLDEN_FILE, process.env.PREAMBLE_GOLDEN === "update", partial, (r) => r.status === 200 || r.status === 422);

/** preamble.test.ts's references: every case is a valid document, so only a 200 is kept. */
export const preambleCasesGolden = () => goldenRefs<Reference>(PREAMBLE_CASES_GOLDEN_FILE, process.env.PREAMBLE_GOLDEN === "update", false, (r) => r.status === 200);

/** An error's cause as the references keep it. */
export const errorCause = (r: Result): Reference["cause"] => ({ code: r.json.error.code, message: r.json.error.message, file: r.json.error.file, line: r.json.error.line });

/** A reference computed now: `body` compiled on the server at `url` (without a namespace: no precompiled preamble). */
export async function serverReference(url: string, body: Record<string, unknown>): Promise<Reference> {
  const r = await compile(url, body);
  if (r.status === 200) return { status: r.status, pages: pdfPages(r.body), text: pdfText(r.body) };
  return { status: r.status, ...(r.json?.error ? { cause: errorCause(r) } : {}) };
}

/** Whether an answer is the reference's: the status, and the PDF's pages and text or the error's cause. */
export function sameAsReference(r: Result, ref: Reference): boolean {
  if (r.status !== ref.status) return false;
  if (r.status === 200) return pdfPages(r.body) === ref.pages && pdfText(r.body) === ref.text;
  return JSON.stringify(r.json?.error ? errorCause(r) : undefined) === JSON.stringify(ref.cause);
}
