import { ApiError } from "../../platform/errors.ts";
import { toBase64 } from "../../platform/crypto.ts";
import { pathIssue } from "../../../container/src/names.ts";
import { type ArchiveEntry, ARCHIVE_LIMITS, badArchive, Budget, shown } from "./budget.ts";
import { gunzip, untar } from "./tar.ts";
import { unzip } from "./zip.ts";

export type ProjectFile = { path: string; content: string; encoding: "utf8" | "base64" };
export type ArchiveProject = { mainPath: string; source: string; files: ProjectFile[] };

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
/** A line that starts (after blanks) with `\documentclass`: what latexmk and Overleaf look for. */
const DOCUMENTCLASS = /^[ \t]*\\documentclass/m;

/** The entries of a zip or a tar.gz, told apart by their first bytes (not by the Content-Type). */
export function unpack(data: Uint8Array): ArchiveEntry[] {
  const budget = new Budget(data.byteLength);
  if (data[0] === 0x50 && data[1] === 0x4b) return unzip(data, budget);
  if (data[0] === 0x1f && data[1] === 0x8b) return untar(gunzip(data, budget), budget);
  throw badArchive("is neither a zip nor a gzip-compressed tar file.");
}

/**
 * The project's paths: `./` dropped, folders of macOS's resource forks skipped, every other name held
 * to the `files` path rules (no `..`, no absolute path), no name twice (case-insensitively, as
 * `files`), and one folder holding everything (an archived folder) taken as the project root.
 */
export function projectPaths(entries: ArchiveEntry[]): ArchiveEntry[] {
  const kept: ArchiveEntry[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    let name = e.name;
    while (name.startsWith("./")) name = name.slice(2);
    if (name === "" || name.startsWith("__MACOSX/")) continue;
    if (name.startsWith("/")) throw badArchive(`holds an absolute path (${shown(e.name)}); paths must be relative to the project.`);
    if (name.split("/").includes("..")) throw badArchive(`holds ${shown(e.name)}, which leads out of the project (\`..\`).`);
    const issue = pathIssue(name);
    if (issue) throw badArchive(`holds ${shown(e.name)}: ${issue}.`);
    const key = name.toLowerCase();
    if (seen.has(key)) throw badArchive(`holds ${shown(e.name)} twice (names are compared ignoring case).`);
    seen.add(key);
    kept.push({ name, bytes: e.bytes });
  }
  const slash = kept[0]?.name.indexOf("/") ?? -1;
  if (slash > 0) {
    const top = kept[0]!.name.slice(0, slash + 1);
    if (kept.every((e) => e.name.startsWith(top))) return kept.map((e) => ({ name: e.name.slice(top.length), bytes: e.bytes }));
  }
  return kept;
}

function isMainCandidate(e: ArchiveEntry): boolean {
  if (e.name.includes("/") || !e.name.toLowerCase().endsWith(".tex")) return false;
  try {
    return DOCUMENTCLASS.test(utf8.decode(e.bytes));
  } catch {
    return false;
  }
}

/** The main file: the one named, else a root `.tex` with `\documentclass` (`main.tex` first, else the only one). */
export function findMain(entries: ArchiveEntry[], named: string | undefined): ArchiveEntry {
  if (named !== undefined) {
    const e = entries.find((f) => f.name === named);
    if (!e) throw new ApiError(422, "main_file_not_found", `mainPath ${shown(named)} is not in the archive.`, { mainPath: named });
    return e;
  }
  const candidates = entries.filter(isMainCandidate);
  const main = candidates.find((e) => e.name === "main.tex") ?? (candidates.length === 1 ? candidates[0] : undefined);
  if (main) return main;
  const names = candidates.map((e) => e.name);
  if (names.length === 0)
    throw new ApiError(422, "no_main_file", "The archive has no main file: no `.tex` file at its root starts a line with `\\documentclass`. Name it with `mainPath`.", { candidates: names });
  throw new ApiError(422, "ambiguous_main_file", `The archive has ${names.length} possible main files (${names.slice(0, 10).join(", ")}) and none is main.tex: name one with \`mainPath\`.`, { candidates: names });
}

function asFile(e: ArchiveEntry): ProjectFile {
  try {
    return { path: e.name, content: utf8.decode(e.bytes), encoding: "utf8" };
  } catch {
    return { path: e.name, content: toBase64(e.bytes), encoding: "base64" };
  }
}

/** An archive as the JSON request's fields: the main file's text as `source`, the rest as `files`. */
export function archiveProject(data: Uint8Array, mainPath?: string): ArchiveProject {
  const entries = projectPaths(unpack(data));
  const main = findMain(entries, mainPath);
  let source: string;
  try {
    source = utf8.decode(main.bytes);
  } catch {
    throw badArchive(`main file ${shown(main.name)} is not UTF-8 text.`);
  }
  return { mainPath: main.name, source, files: entries.filter((e) => e !== main).map(asFile) };
}

export { ARCHIVE_LIMITS };
