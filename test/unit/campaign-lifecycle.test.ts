import { describe, expect, it } from "vitest";
import { CAMPAIGN_STATUSES, nextStatus } from "../../src/messaging/campaigns/lifecycle.ts";

describe("campaign lifecycle", () => {
  it("follows draft -> running -> paused -> running -> completed", () => {
    expect(nextStatus("draft", "start")).toBe("running");
    expect(nextStatus("running", "pause")).toBe("paused");
    expect(nextStatus("paused", "resume")).toBe("running");
    expect(nextStatus("running", "complete")).toBe("completed");
  });

  it("start is idempotent when running, and refused once finished", () => {
    expect(nextStatus("running", "start")).toBe("running");
    expect(nextStatus("completed", "start")).toBeNull();
    expect(nextStatus("cancelled", "start")).toBeNull();
    expect(nextStatus("paused", "start")).toBeNull();
  });

  it("cancel works from every state before completed, never after", () => {
    for (const s of CAMPAIGN_STATUSES) {
      expect(nextStatus(s, "cancel")).toBe(s === "completed" ? null : "cancelled");
    }
  });

  it("updates only in draft; scheduling only from draft", () => {
    expect(nextStatus("draft", "update")).toBe("draft");
    expect(nextStatus("running", "update")).toBeNull();
    expect(nextStatus("draft", "schedule")).toBe("scheduled");
    expect(nextStatus("paused", "schedule")).toBeNull();
  });
});
