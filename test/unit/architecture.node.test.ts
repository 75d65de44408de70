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

/** Folders under src/ that hold a resource: an HTTP surface (routes.ts) over its own service. */
function resourceFolders(dir: string): string[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  const here = entries.some((e) => e.isFile() && e.name === "routes.ts") ? [dir] : [];
  return [...here, ...entries.filter((e) => e.isDirectory()).flatMap((e) => resourceFolders(join(dir, e.name)))];
}

/** Resources that map no rows (a WebSocket, the event catalog, network callbacks): no mapper.ts. */
const WITHOUT_ROWS = new Set(["events/stream", "events/catalog", "messaging/hooks"]);

describe("architecture: one template per resource", () => {
  it("each resource folder has schemas.ts, routes.ts, router.ts, service.ts and mapper.ts, and no handlers.ts anywhere", () => {
    const folders = resourceFolders(SRC).map((d) => relative(SRC, d));
    expect(folders).toEqual(expect.arrayContaining(["compile", "events/webhooks", "events/stream", "messaging/campaigns", "messaging/contacts", "messaging/messages", "messaging/sessions", "messaging/hooks", "platform/accounts"]));
    const missing: string[] = [];
    for (const folder of folders) {
      const names = new Set(readdirSync(join(SRC, folder)));
      const files = ["schemas.ts", "routes.ts", "router.ts", "service.ts", ...(WITHOUT_ROWS.has(folder) ? [] : ["mapper.ts"])];
      for (const file of files) if (!names.has(file)) missing.push(`${folder}/${file}`);
    }
    expect(missing).toEqual([]);
    expect(sourceFiles(SRC).filter((f) => f.endsWith("/handlers.ts")).map((f) => relative(ROOT, f))).toEqual([]);
  });

  it("every router is one chain (no mountX(app) style)", () => {
    const mounted = sourceFiles(SRC).filter((f) => readFileSync(f, "utf8").includes("export function mount"));
    expect(mounted.map((f) => relative(ROOT, f))).toEqual([]);
  });

  it("every routes.ts declares its routes through one routeGroup (so no route forgets its group's tags or errors)", () => {
    const off = resourceFolders(SRC)
      .map((d) => join(d, "routes.ts"))
      .filter((f) => {
        const text = readFileSync(f, "utf8");
        return text.includes("createRoute") || text.split("routeGroup(").length !== 2;
      });
    expect(off.map((f) => relative(ROOT, f))).toEqual([]);
  });
});

/** Lines of a source file that reach the `messages` table: SQL text, or the drizzle table imported from the schema. */
export function messagesTableUses(text: string): number[] {
  const out: number[] = [];
  const isWordChar = (ch: string | undefined) => ch !== undefined && /[A-Za-z0-9_]/.test(ch);
  text.split("\n").forEach((line, i) => {
    const sql = ["FROM messages", "INTO messages", "UPDATE messages", "JOIN messages", 'table: "messages"'].some((kw) => {
      const at = line.indexOf(kw);
      return at >= 0 && !isWordChar(line[at + kw.length]);
    });
    // A type-only import (the row type) reads nothing.
    const drizzle = line.startsWith("import ") && !line.startsWith("import type") && line.includes("db/schema") && line.split(/[\s{},]+/).includes("messages");
    if (sql || drizzle) out.push(i + 1);
  });
  return out;
}

describe("architecture: owners of tables", () => {
  it("finds the uses it checks", () => {
    expect(messagesTableUses('x\nconst q = "SELECT 1 FROM messages m";\nJOIN messages_old\nimport { messages } from "../../db/schema/index.ts";')).toEqual([2, 4]);
  });

  it("only messaging/messages/store.ts reads or writes messages rows", () => {
    const owner = join(SRC, "messaging/messages/store.ts");
    const others = sourceFiles(SRC).filter((f) => f !== owner && !f.startsWith(join(SRC, "db") + "/"));
    const uses = others.flatMap((f) => messagesTableUses(readFileSync(f, "utf8")).map((line) => `${relative(ROOT, f)}:${line}`));
    expect(uses).toEqual([]);
    expect(messagesTableUses(readFileSync(owner, "utf8")).length).toBeGreaterThan(0);
  });
});
