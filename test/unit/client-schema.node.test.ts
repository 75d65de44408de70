import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { documentSource, schemaSource } from "../../client/generate.ts";

const root = join(import.meta.dirname, "../..");
const read = (f: string) => readFileSync(join(root, "client", f), "utf8");

describe("typed client", () => {
  it("client/schema.d.ts is what openapi-typescript makes of client/openapi.json (else run `npm run client:generate`)", async () => {
    const doc = JSON.parse(read("openapi.json")) as object;
    expect(read("openapi.json")).toBe(documentSource(doc));
    expect(read("schema.d.ts")).toBe(await schemaSource(doc));
  });
});
