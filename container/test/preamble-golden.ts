// The reference side of preamble-corpus.test.ts: each edited pdflatex corpus document compiled
// through the server without a namespace (no precompiled preamble). It does not change between
// runs unless TeX or the document does, so it is kept in preamble-golden.json, keyed like
// corpus-golden.json by the TeX installation's identity and, per document, by a hash of the exact
// request body. A different identity, a changed document or one not in the file yet is compiled
// again (inside its test); PREAMBLE_GOLDEN=update recomputes every one.
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { texIdentity } from "./corpus-golden.ts";

export const PREAMBLE_GOLDEN_FILE = path.join(import.meta.dirname, "preamble-golden.json");

/** What the tests compare: the status, and the PDF's pages and text or the error's cause. */
export interface Reference {
  status: number;
  pages?: number;
  text?: string;
  cause?: { code: unknown; message: unknown; file: unknown; line: unknown };
}

interface Golden {
  identity: string;
  docs: Record<string, { hash: string; ref: Reference }>;
}

export const bodyHash = (body: unknown): string => createHash("sha256").update(JSON.stringify(body)).digest("hex");

function load(identity: string): Golden {
  if (process.env.PREAMBLE_GOLDEN === "update" || !existsSync(PREAMBLE_GOLDEN_FILE)) return { identity, docs: {} };
  const stored = JSON.parse(readFileSync(PREAMBLE_GOLDEN_FILE, "utf8")) as Golden;
  return stored.identity === identity ? stored : { identity, docs: {} };
}

/**
 * `reference(name, body, compute)` gives the stored reference where the identity and the body's
 * hash match, else runs `compute` and remembers its result; `save(names)` writes the file back
 * when anything was recomputed, keeping the names given (all of the corpus) or, for a partial run,
 * every stored one.
 */
export function preambleGolden(partial: boolean): {
  identity: string;
  reference(name: string, body: unknown, compute: () => Promise<Reference>): Promise<{ ref: Reference; stored: boolean }>;
  save(names: string[]): string[];
} {
  const identity = texIdentity();
  const golden = load(identity);
  const recomputed: string[] = [];
  return {
    identity,
    async reference(name, body, compute) {
      const hash = bodyHash(body);
      const stored = golden.docs[name];
      if (stored?.hash === hash) return { ref: stored.ref, stored: true };
      const ref = await compute();
      // only an answer of the document itself is kept: a 5xx or a queue timeout fails its test now
      // and must not become the next run's reference
      if (ref.status === 200 || ref.status === 422) {
        golden.docs[name] = { hash, ref };
        recomputed.push(name);
      }
      return { ref, stored: false };
    },
    save(names) {
      if (recomputed.length === 0) return recomputed;
      const keep = partial ? Object.keys(golden.docs) : names.filter((n) => golden.docs[n]);
      const docs = Object.fromEntries(keep.sort().map((n) => [n, golden.docs[n]!]));
      const tmp = `${PREAMBLE_GOLDEN_FILE}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify({ identity, docs }, null, 1)}\n`);
      renameSync(tmp, PREAMBLE_GOLDEN_FILE);
      return recomputed;
    },
  };
}
