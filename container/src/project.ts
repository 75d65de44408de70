// What a request's own files say about how to compile it: its latexmkrc (see latexmkrc.ts), read
// from the main file's folder, else from the project root, as latexmk would find it where it runs.
import type { Engine } from "./config.ts";
import { projectFonts, type ProjectFont } from "./fonts.ts";
import { inProject, LATEXMKRC_NAMES, MAX_RC_BYTES, readLatexmkrc } from "./latexmkrc.ts";
import { mainPathIssue } from "./names.ts";
import { makeindexOptions } from "./passes.ts";
import { inFolder } from "./workdir.ts";

export interface SearchPaths {
  TEXINPUTS: string[];
  BIBINPUTS: string[];
  BSTINPUTS: string[];
}

export interface ProjectSettings {
  /** Which latexmkrc was read (a project path), if any. */
  rc?: string;
  /** Project folders searched before the default path (`//` suffix: with subfolders), per variable. */
  paths: SearchPaths;
  /** makeindex options of the latexmkrc ([] without one); undefined: its style is not a project file name. */
  makeindex: string[] | undefined;
  /** The latexmkrc's settings that were not honoured, one short line each. */
  ignored: string[];
  /** The project's own fonts, with their family names (xelatex and lualatex find them by those). */
  fonts: ProjectFont[];
}

interface Request {
  files: { path: string; data: Buffer }[];
  /** The request's own main path and engine, when it names them. */
  mainPath?: string | undefined;
  engine?: Engine | undefined;
}

const folderOf = (p: string) => (p.includes("/") ? p.slice(0, p.lastIndexOf("/")) : "");

/** The latexmkrc that applies to a main file in folder `sub`: its folder's, else the root's. */
function findRc(files: Request["files"], sub: string): { path: string; data: Buffer } | undefined {
  const dirs = sub ? [sub, ""] : [""];
  for (const d of dirs)
    for (const n of LATEXMKRC_NAMES) {
      const f = files.find((x) => x.path === inFolder(d, n));
      if (f) return f;
    }
  return undefined;
}

/** Whether `p` may be the main file beside `files` (no file has it, none is its folder, it is no file's folder). */
function freeFor(p: string, files: Request["files"]): boolean {
  const key = p.toLowerCase();
  return files.every((f) => {
    const k = f.path.toLowerCase();
    return k !== key && !k.startsWith(`${key}/`) && !key.startsWith(`${k}/`);
  });
}

/**
 * The main path, engine and project settings of a request: its own main path and engine win;
 * without them, the latexmkrc's `@default_files` and `$pdf_mode`, else `main.tex` and pdflatex.
 */
export function projectSettings(req: Request, defaultMain: string): { mainPath: string; engine: Engine; project: ProjectSettings } {
  let mainPath = req.mainPath ?? defaultMain;
  const project: ProjectSettings = { paths: { TEXINPUTS: [], BIBINPUTS: [], BSTINPUTS: [] }, makeindex: [], ignored: [], fonts: projectFonts(req.files) };
  const file = findRc(req.files, folderOf(mainPath));
  if (!file) return { mainPath, engine: req.engine ?? "pdflatex", project };
  project.rc = file.path;
  const dir = folderOf(file.path);
  // only its start is decoded: a large file costs no more than MAX_RC_BYTES
  const rc = readLatexmkrc(file.data.subarray(0, MAX_RC_BYTES).toString("utf8"), file.data.length > MAX_RC_BYTES);
  project.ignored.push(...rc.ignored);
  const wanted = rc.defaultFiles[0];
  if (req.mainPath === undefined && wanted !== undefined) {
    const p = inProject(dir, wanted);
    if (p && !mainPathIssue(p) && freeFor(p, req.files)) mainPath = p;
    else project.ignored.push(`@default_files (${wanted.slice(0, 60)} cannot be the main file)`);
  } else if (wanted !== undefined && req.mainPath !== undefined && inProject(dir, wanted) !== req.mainPath) {
    project.ignored.push("@default_files (the request names its main file)");
  }
  if (rc.engine && req.engine && rc.engine !== req.engine) project.ignored.push(`the engine ${rc.engine} (the request asks for ${req.engine})`);
  for (const name of ["TEXINPUTS", "BIBINPUTS", "BSTINPUTS"] as const) {
    for (const f of rc.paths[name]) {
      const recursive = f.endsWith("//");
      const p = inProject(dir, recursive ? f.slice(0, -2) : f);
      // ":" separates kpathsea's path elements; "!" and "{" are its own syntax
      if (p === undefined || /[:!{}]/.test(p)) project.ignored.push(`the ${name} folder ${f.slice(0, 60)} (not a folder of the project)`);
      else project.paths[name].push(recursive ? `${p}//` : p);
    }
  }
  if (rc.makeindex) project.makeindex = makeindexOptions(rc.makeindex);
  return { mainPath, engine: req.engine ?? rc.engine ?? "pdflatex", project };
}

/**
 * The search-path variables of a job's processes: the project's folders first (as latexmk's
 * ensure_path prepends them), then the main file's folder, then the project root when the main
 * file is in a subfolder, then TeX's own path (the trailing `:`). `root` is the job folder as the
 * processes see it. Undefined entries leave engineEnv's value as it is.
 */
export function searchEnv(paths: SearchPaths, root: string, sub: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ["TEXINPUTS", "BIBINPUTS", "BSTINPUTS"] as const) {
    if (paths[name].length === 0) continue;
    const dirs = paths[name].map((p) => (p === "" ? root : `${root}/${p}`));
    env[name] = [".", ...dirs, ...(sub ? [root] : []), ""].join(":");
  }
  return env;
}
