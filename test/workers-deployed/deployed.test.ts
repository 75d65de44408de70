import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { config } from "../../src/platform/config.ts";

// Every other test of this project means something only if the Worker really runs with the deployed
// settings: a local .dev.vars (or .env) is loaded by the test pool and would silently change them.
describe("deployed settings", () => {
  it("are wrangler.toml's: loopback URLs refused, no SIGNING_SECRET", () => {
    const vars = env as unknown as Record<string, unknown>;
    expect(vars.ALLOW_LOOPBACK_URLS, "ALLOW_LOOPBACK_URLS (remove it from .dev.vars / .env)").toBe("0");
    expect(vars.WEBHOOK_ALLOW_LOOPBACK, "WEBHOOK_ALLOW_LOOPBACK (remove it from .dev.vars / .env)").toBeUndefined();
    expect(vars.SIGNING_SECRET, "SIGNING_SECRET (remove it from .dev.vars / .env)").toBeUndefined();
    expect(config(env).allowLoopbackUrls).toBe(false);
  });
});
