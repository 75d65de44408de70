import { describe, expect, it } from "vitest";
import committed from "../../client/openapi.json";
import { api } from "./helpers.ts";

describe("typed client", () => {
  it("was generated from the Worker's current /openapi.json (else run `npm run client:generate`)", async () => {
    const live = await (await api("/openapi.json")).json();
    expect(live, "client/openapi.json is stale: run `npm run client:generate`").toEqual(committed);
  });
});
