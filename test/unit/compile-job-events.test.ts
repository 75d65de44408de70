import { describe, expect, it } from "vitest";
import { parseLastEventId } from "../../src/compile/job-events.ts";

describe("Last-Event-ID of a compile job's events", () => {
  it("reads <attempt>.<n>", () => {
    expect(parseLastEventId("2.17")).toEqual({ attempt: 2, seq: 17 });
    expect(parseLastEventId(" 1.3 ")).toEqual({ attempt: 1, seq: 3 });
  });

  it("anything else starts from the beginning", () => {
    for (const h of [undefined, "", "17", "a.b", "1.-1", "-1.1", "1.2.3", "1234567.1", "1.1234567890", "1.1\nid: 9", "1e3.1"]) expect(parseLastEventId(h), String(h)).toEqual({ attempt: 0, seq: 0 });
  });
});
