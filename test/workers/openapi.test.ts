import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app.ts";
import { api } from "./helpers.ts";

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown>; security?: unknown[]; requestBody?: unknown }>> };

// Routes served outside the OpenAPI document on purpose: the document itself and its viewer.
const UNDOCUMENTED = new Set(["GET /openapi.json", "GET /docs", "GET /docs/*"]);

describe("OpenAPI document", () => {
  it("documents every route the app serves", async () => {
    const doc = (await (await api("/openapi.json")).json()) as Doc;
    const documented = new Set<string>();
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ":$1")}`);
    }
    const served = createApp()
      .routes.filter((r) => r.method !== "ALL")
      .map((r) => `${r.method} ${r.path}`)
      .filter((r) => !UNDOCUMENTED.has(r));
    const missing = [...new Set(served)].filter((r) => !documented.has(r));
    expect(missing).toEqual([]);
  });

  it("gives authenticated operations the bearer scheme and 401/429 responses, and bodies their 400", async () => {
    const doc = (await (await api("/openapi.json")).json()) as Doc;
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const isPublic = Array.isArray(op.security) && op.security.length === 0;
        if (!isPublic) {
          expect(Object.keys(op.responses), `${method} ${path}`).toEqual(expect.arrayContaining(["401", "429"]));
        }
        if (op.requestBody) expect(Object.keys(op.responses), `${method} ${path}`).toContain("400");
      }
    }
  });
});
