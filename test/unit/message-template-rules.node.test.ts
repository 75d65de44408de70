import { describe, expect, it } from "vitest";
import { createIssues, parameterCounts, sendIssues, variablesOf } from "../../src/messaging/templates/rules.ts";

describe("message template rules", () => {
  it("reads variables once each, positional or named, and never scans past a brace pair", () => {
    expect(variablesOf("Hi {{1}}, {{2}} and {{1}} again")).toEqual(["1", "2"]);
    expect(variablesOf("Hi {{first_name}}")).toEqual(["first_name"]);
    expect(variablesOf("{{".repeat(50_000))).toEqual([]);
  });

  it("counts what a send needs: text header parameter or media, body, and buttons by index", () => {
    const counts = parameterCounts([
      { type: "HEADER", format: "IMAGE", example: { header_handle: ["h"] } },
      { type: "BODY", text: "{{1}} {{2}} {{3}}" },
      { type: "BUTTONS", buttons: [{ type: "QUICK_REPLY", text: "ok" }, { type: "URL", text: "go", url: "https://e.com/{{1}}" }, { type: "COPY_CODE", example: ["X"] }] },
    ]);
    expect(counts).toEqual({ header: 1, body: 3, buttons: new Map([[1, 1], [2, 1]]) });
  });

  it("names the part and the counts of a missing or extra parameter; a fitting send has none", () => {
    const tpl = [{ type: "BODY", text: "Hi {{1}}" }];
    expect(sendIssues(tpl, [{ type: "body", parameters: [{ type: "text", text: "a" }] }])).toEqual([]);
    expect(sendIssues(tpl, undefined)[0]!.message).toBe("the template's body needs 1 parameter(s); 0 given (missing 1)");
    expect(sendIssues(tpl, [{ type: "BODY", parameters: [1, 2] }, { type: "button", index: "0", parameters: [1] }]).map((i) => i.message)).toEqual([
      "the template's body takes 1 parameter(s); 2 given (1 extra)",
      "the template's button 0 takes 0 parameter(s); 1 given (1 extra)",
    ]);
  });

  it("an AUTHENTICATION template may leave its body text to Meta and has OTP buttons only", () => {
    expect(createIssues({ name: "otp", language: "en_US", category: "AUTHENTICATION", components: [{ type: "BODY", add_security_recommendation: true }, { type: "BUTTONS", buttons: [{ type: "OTP", otp_type: "COPY_CODE" }] }] })).toEqual([]);
    expect(createIssues({ name: "otp", language: "en_US", category: "AUTHENTICATION", components: [{ type: "BODY" }, { type: "BUTTONS", buttons: [{ type: "QUICK_REPLY", text: "x" }] }] })[0]!.message).toContain("only OTP buttons");
  });
});
