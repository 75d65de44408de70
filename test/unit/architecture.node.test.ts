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
    expect(folders).toEqual(expect.arrayContaining(["compile", "events/webhooks", "events/stream", "messaging/campaigns", "messaging/contacts", "messaging/messages", "messaging/sessions", "messaging/templates", "messaging/hooks", "platform/accounts"]));
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

  it("only the files of messaging/store/ read or write messages rows", () => {
    const owners = join(SRC, "messaging/store") + "/";
    const others = sourceFiles(SRC).filter((f) => !f.startsWith(owners) && !f.startsWith(join(SRC, "db") + "/"));
    const uses = others.flatMap((f) => messagesTableUses(readFileSync(f, "utf8")).map((line) => `${relative(ROOT, f)}:${line}`));
    expect(uses).toEqual([]);
    expect(sourceFiles(owners).flatMap((f) => messagesTableUses(readFileSync(f, "utf8"))).length).toBeGreaterThan(0);
  });
});

/**
 * Inside src/messaging (ARCHITECTURE.md "Inside messaging"): the subfolders in layers, lowest first.
 * A folder imports its own files, the vocabulary and the folders of lower layers, never a folder of
 * its own layer or a higher one, so no import cycle can form between folders. The network drivers
 * sit below the store: they know only their port (networks/driver.ts), which the session implements.
 */
const MESSAGING = join(SRC, "messaging");
const MESSAGING_LAYERS: string[][] = [["networks"], ["queue"], ["contacts"], ["store"], ["media"], ["sessions"], ["templates"], ["messages", "chats", "hooks", "campaigns"]];
/**
 * The vocabulary every folder may use: the files at the root of src/messaging (but index.ts, which
 * composes them), each resource's schemas and mapper, and a few files of pure types and rules.
 * Vocabulary imports only vocabulary.
 */
const VOCABULARY_FILES = new Set(["messages/content.ts", "media/limits.ts", "campaigns/lifecycle.ts", "campaigns/template.ts", "templates/rules.ts"]);

const isVocabulary = (rel: string) => (!rel.includes("/") && rel !== "index.ts") || rel.endsWith("/schemas.ts") || rel.endsWith("/mapper.ts") || VOCABULARY_FILES.has(rel);

/** Every import (type-only ones too: they bind the files just the same) from one messaging file to another. */
function messagingImports(): { from: string; to: string }[] {
  return sourceFiles(MESSAGING).flatMap((file) =>
    importsOf(readFileSync(file, "utf8"))
      .map((spec) => resolve(dirname(file), spec))
      .filter((target) => target.startsWith(MESSAGING + "/"))
      .map((target) => ({ from: relative(MESSAGING, file), to: relative(MESSAGING, target) })),
  );
}

/** The cycles of a directed graph (its strongly connected components of more than one node, or a node importing itself). */
export function cyclesOf(edges: { from: string; to: string }[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const scc: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1 || (next.get(v) ?? []).includes(v)) out.push(scc.sort());
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("architecture: inside messaging", () => {
  it("finds the cycles it checks", () => {
    const e = (from: string, to: string) => ({ from, to });
    expect(cyclesOf([e("a", "b"), e("b", "c"), e("c", "a"), e("c", "d")])).toEqual([["a", "b", "c"]]);
    expect(cyclesOf([e("a", "b"), e("b", "c")])).toEqual([]);
  });

  it("no import cycle between the files of src/messaging", () => {
    expect(cyclesOf(messagingImports())).toEqual([]);
  });

  it("every subfolder of src/messaging imports only itself, the vocabulary and lower layers", () => {
    const layerOf = new Map(MESSAGING_LAYERS.flatMap((folders, i) => folders.map((f) => [f, i] as const)));
    const folders = readdirSync(MESSAGING, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
    expect(folders.filter((f) => !layerOf.has(f))).toEqual([]);
    const violations = messagingImports().filter(({ from, to }) => {
      if (isVocabulary(to)) return false;
      if (isVocabulary(from) || from === "index.ts") return from !== "index.ts";
      const [a, b] = [from.split("/")[0]!, to.split("/")[0]!];
      return a !== b && !(layerOf.get(b)! < layerOf.get(a)!);
    });
    expect(violations.map(({ from, to }) => `${from} imports ${to}`)).toEqual([]);
  });

  it("network drivers reach no table, event or store: only their port", () => {
    const networks = join(MESSAGING, "networks");
    const reach = sourceFiles(networks).flatMap((file) =>
      importsOf(readFileSync(file, "utf8"))
        .map((spec) => relative(SRC, resolve(dirname(file), spec)))
        .filter((target) => target.startsWith("db/") || target.startsWith("events/"))
        .map((target) => `${relative(ROOT, file)} imports ${target}`),
    );
    expect(reach).toEqual([]);
  });
});

/**
 * Lines that reach a database other than through platform/shards.ts: the `DB` binding itself, or a
 * drizzle client built by hand. Messaging and events rows live in the account's shard, so every
 * database is reached through `shardAt`/`accountShard` (shards) or `directoryDb`/`directoryD1`.
 */
export function rawDatabaseUses(text: string): number[] {
  const out: number[] = [];
  text.split("\n").forEach((line, i) => {
    if (/\benv\.DB\b|\bgetDb\(|\.SHARD_\d/.test(line)) out.push(i + 1);
  });
  return out;
}

describe("architecture: directory and shards", () => {
  it("finds the uses it checks", () => {
    expect(rawDatabaseUses('a\nawait env.DB.prepare("x")\nconst db = getDb(d1);\nthis.env.SHARD_1\nenv.DBX')).toEqual([2, 3, 4]);
  });

  it("messaging, events and compile reach D1 only through platform/shards.ts (no env.DB, no getDb)", () => {
    const files = ["messaging", "events", "compile"].flatMap((d) => sourceFiles(join(SRC, d)));
    const uses = files.flatMap((f) => rawDatabaseUses(readFileSync(f, "utf8")).map((line) => `${relative(ROOT, f)}:${line}`));
    expect(uses).toEqual([]);
  });

  it("platform reaches D1 through shards.ts too (only shards.ts names the bindings)", () => {
    const files = sourceFiles(join(SRC, "platform")).filter((f) => !f.endsWith("/shards.ts"));
    const uses = files.flatMap((f) => rawDatabaseUses(readFileSync(f, "utf8")).map((line) => `${relative(ROOT, f)}:${line}`));
    expect(uses).toEqual([]);
  });
});
