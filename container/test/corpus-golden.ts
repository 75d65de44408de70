// The bare engine's outcome for each corpus document, kept in corpus-golden.json so that a test
// run compiles each document once (through the server) instead of twice. The file is keyed by
// the TeX installation's identity: the engines' and biber's version lines and a hash of the
// installed TeX packages (their Debian versions, or the distribution's file list without dpkg).
// A different identity, a document whose files changed or one not in the file yet gets its
// outcome recomputed with the bare engine; CORPUS_GOLDEN=update recomputes every one.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { resolveTexRoot } from "../src/texroot.ts";
import { bare, type Doc, type Outcome } from "./corpus-bare.ts";

export const GOLDEN_FILE = path.join(import.meta.dirname, "corpus-golden.json");

interface Golden {
  identity: string;
  docs: Record<string, { hash: string; outcome: Outcome }>;
}

function firstLine(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: "utf8" });
  return `${cmd}: ${r.status === 0 ? (r.stdout.split("\n")[0] ?? "").trim() : `unavailable (${r.status ?? r.error?.message})`}`;
}

/** The TeX packages installed: their Debian versions where dpkg knows them, else TEXMFDIST's file list. */
function packageSet(): string {
  const list = readFileSync(path.join(import.meta.dirname, "..", "tex-packages.txt"), "utf8")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const root = resolveTexRoot(process.env);
  const dpkg = spawnSync("dpkg-query", [...(root ? [`--admindir=${root}/var/lib/dpkg`] : []), "-W", "-f=${Package} ${Version} ${Status}\n", ...list], { encoding: "utf8" });
  if (dpkg.status === 0) return dpkg.stdout.split("\n").sort().join("\n");
  const dist = spawnSync("kpsewhich", ["-var-value", "TEXMFDIST"], { encoding: "utf8" }).stdout.trim();
  const lsR = path.join(dist, "ls-R");
  return existsSync(lsR) ? readFileSync(lsR, "latin1") : "no package list";
}

/** What identifies the installed TeX: any change to it makes every stored outcome stale. */
export function texIdentity(): string {
  const versions = [firstLine("pdflatex", ["--version"]), firstLine("xelatex", ["--version"]), firstLine("lualatex", ["--version"]), firstLine("biber", ["--version"])];
  return `${versions.join("; ")}; packages sha256:${createHash("sha256").update(packageSet()).digest("hex")}`;
}

function load(identity: string): Golden {
  if (process.env.CORPUS_GOLDEN === "update" || !existsSync(GOLDEN_FILE)) return { identity, docs: {} };
  const stored = JSON.parse(readFileSync(GOLDEN_FILE, "utf8")) as Golden;
  return stored.identity === identity ? stored : { identity, docs: {} };
}

/**
 * The bare outcomes of the corpus: `outcome(doc)` gives the stored one where the identity and the
 * document's hash match, else runs the bare engine (inside the caller's test, beside its server
 * compile); `save()` writes the file back when anything was recomputed, keeping only the documents
 * given (all of the corpus), or every stored one when only part of the corpus ran.
 */
export function goldenStore(partial: boolean): { outcome(doc: Doc): Promise<Outcome>; save(corpus: Doc[]): string[] } {
  const identity = texIdentity();
  const golden = load(identity);
  const recomputed: string[] = [];
  return {
    async outcome(doc) {
      const stored = golden.docs[doc.name];
      if (stored?.hash === doc.hash) return stored.outcome;
      const outcome = await bare(doc);
      golden.docs[doc.name] = { hash: doc.hash, outcome };
      recomputed.push(doc.name);
      return outcome;
    },
    save(corpus) {
      if (recomputed.length === 0) return recomputed;
      const names = partial ? Object.keys(golden.docs) : corpus.map((d) => d.name).filter((n) => golden.docs[n]);
      const docs = Object.fromEntries(names.sort().map((n) => [n, golden.docs[n]!]));
      const tmp = `${GOLDEN_FILE}.${process.pid}.tmp`;
      writeFileSync(tmp, `${JSON.stringify({ identity, docs }, null, 1)}\n`);
      renameSync(tmp, GOLDEN_FILE);
      return recomputed;
    },
  };
}
