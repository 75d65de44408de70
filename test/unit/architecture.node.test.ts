import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The layers of src/ (ARCHITECTURE.md): a module may import its own layer and those below it, never
 * one above. platform and db are the kernel; events serves the domains; messaging and compile are
 * domains that do not know each other; the entry points (src/*.ts) compose everything.
 */
const ROOT = resolve(import.meta.dirname, "../..");
const SRC = join(ROOT, "src");
const MAY_IMPORT: Record<string, string[]> = {
  db: ["db"],
  platform: ["platform", "db"],
  events: ["events", "platform", "db"],
  messaging: ["messaging", "events", "platform", "db"],
  compile: ["compile", "events", "platform", "db"],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** Relative specifiers of static imports, re-exports and dynamic imports (line by line: no regex over a whole file). */
export function importsOf(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    for (const marker of [' from "', 'import("', 'import "']) {
      const at = line.indexOf(marker);
      if (at < 0) continue;
      const start = at + marker.length;
      const end = line.indexOf('"', start);
      if (end > start) out.push(line.slice(start, end));
    }
  }
  return out.filter((s) => s.startsWith("."));
}

const layerOf = (file: string): string | null => {
  const rel = relative(SRC, file);
  return rel.includes("/") ? rel.slice(0, rel.indexOf("/")) : null;
};

describe("architecture: no module imports upward", () => {
  it("finds the imports it checks", () => {
    expect(importsOf('import { a } from "../x.ts";\nexport { b } from "./y.ts";\nconst c = await import("../../z.ts");\nimport "./w.ts";')).toEqual(["../x.ts", "./y.ts", "../../z.ts", "./w.ts"]);
  });

  it("every file of src/ imports only its own layer and those below", () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(50);
    const violations: string[] = [];
    for (const file of files) {
      const from = layerOf(file);
      if (from === null) continue; // entry points compose every layer
      const allowed = MAY_IMPORT[from];
      if (!allowed) {
        violations.push(`${relative(ROOT, file)}: src/${from} is not a known layer`);
        continue;
      }
      for (const spec of importsOf(readFileSync(file, "utf8"))) {
        const target = resolve(dirname(file), spec);
        if (!target.startsWith(SRC + "/")) continue; // data outside the code (package.json)
        const to = layerOf(target);
        if (to === null || !allowed.includes(to)) violations.push(`${relative(ROOT, file)} imports ${relative(ROOT, target)}`);
      }
    }
    expect(violations).toEqual([]);
  });
});
