import { describe, expect, it } from "vitest";
import { DEFAULT_RETRY_SCHEDULE, parseRetryAfter, retrySchedule } from "../../src/events/config.ts";
import { activeSecrets } from "../../src/events/delivery.ts";
import { webhookMatches } from "../../src/events/matching.ts";
import { decideOutcome } from "../../src/events/retry-policy.ts";

const schedule = [5, 300, 1800];
const env = (v: string) => ({ WEBHOOK_RETRY_SCHEDULE: v }) as Env;

describe("retry policy", () => {
  it("2xx succeeds at any attempt", () => {
    for (const code of [200, 201, 204, 299]) expect(decideOutcome(1, { statusCode: code, retryAfter: null }, schedule)).toEqual({ status: "succeeded" });
  });

  it("failures retry on the schedule, then fail after the last attempt", () => {
    expect(decideOutcome(1, { statusCode: 500, retryAfter: null }, schedule)).toEqual({ status: "pending", delaySeconds: 5 });
    expect(decideOutcome(2, { statusCode: null, retryAfter: null }, schedule)).toEqual({ status: "pending", delaySeconds: 300 });
    expect(decideOutcome(3, { statusCode: 302, retryAfter: null }, schedule)).toEqual({ status: "pending", delaySeconds: 1800 });
    expect(decideOutcome(4, { statusCode: 500, retryAfter: null }, schedule)).toEqual({ status: "failed", gone: false });
  });

  it("410 fails at once and marks the endpoint gone", () => {
    expect(decideOutcome(1, { statusCode: 410, retryAfter: null }, schedule)).toEqual({ status: "failed", gone: true });
  });

  it("Retry-After lengthens the wait, never shortens it", () => {
    expect(decideOutcome(1, { statusCode: 429, retryAfter: 60 }, schedule)).toEqual({ status: "pending", delaySeconds: 60 });
    expect(decideOutcome(2, { statusCode: 503, retryAfter: 1 }, schedule)).toEqual({ status: "pending", delaySeconds: 300 });
  });

  it("one-shot sends (tests) never retry", () => {
    expect(decideOutcome(1, { statusCode: 500, retryAfter: null }, schedule, true)).toEqual({ status: "failed", gone: false });
  });

  it("parses Retry-After as seconds or an HTTP date, bounded to a day", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:01:00 GMT", now)).toBe(60);
    expect(parseRetryAfter("Wed, 31 Dec 2025 00:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("999999999", now)).toBe(86400);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });

  it("WEBHOOK_RETRY_SCHEDULE overrides the contract's default; junk falls back to it", () => {
    expect(retrySchedule(env("1, 2,3"))).toEqual([1, 2, 3]);
    expect(retrySchedule(env(""))).toEqual(DEFAULT_RETRY_SCHEDULE);
    expect(retrySchedule(env("1,x"))).toEqual(DEFAULT_RETRY_SCHEDULE);
    expect(DEFAULT_RETRY_SCHEDULE).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
  });
});

describe("matching", () => {
  const ev = { type: "message.read", sessionId: "ses_a" };
  it("event filter, *, session filter, enabled", () => {
    expect(webhookMatches({ enabled: true, events: ["*"], sessionId: null }, ev)).toBe(true);
    expect(webhookMatches({ enabled: true, events: ["message.read"], sessionId: "ses_a" }, ev)).toBe(true);
    expect(webhookMatches({ enabled: true, events: ["message.sent"], sessionId: null }, ev)).toBe(false);
    expect(webhookMatches({ enabled: true, events: ["*"], sessionId: "ses_b" }, ev)).toBe(false);
    expect(webhookMatches({ enabled: true, events: ["*"], sessionId: "ses_a" }, { type: "contact.created", sessionId: null })).toBe(false);
    expect(webhookMatches({ enabled: false, events: ["*"], sessionId: null }, ev)).toBe(false);
  });
});

describe("secrets during rotation", () => {
  it("signs with the previous secret only until its grace period ends", () => {
    const hook = { secret: "whsec_new", previousSecret: "whsec_old", previousSecretExpiresAt: 1000 };
    expect(activeSecrets(hook, 999)).toEqual(["whsec_new", "whsec_old"]);
    expect(activeSecrets(hook, 1000)).toEqual(["whsec_new"]);
    expect(activeSecrets({ ...hook, previousSecret: null }, 0)).toEqual(["whsec_new"]);
  });
});
