import { describe, expect, it } from "vitest";
import { api, createKey } from "./helpers.ts";

async function errorCode(res: Response): Promise<string> {
  return ((await res.json()) as { error: { code: string } }).error.code;
}

describe("browser console at / (single-page app from static assets)", () => {
  it("serves the built page at / under a strict CSP, with same-origin scripts only", async () => {
    const res = await api("/");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/html/);
    const csp = res.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self';");
    // A chat's video and audio play from object URLs of files fetched with the key.
    expect(csp).toContain("media-src blob:;");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    const html = await res.text();
    expect(html).toContain('<div id="app">');
    const scripts = [...html.matchAll(/<script\b([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts.length).toBeGreaterThanOrEqual(1);
    for (const [, attrs, body] of scripts) {
      expect(body!.trim()).toBe("");
      expect(attrs).toMatch(/\ssrc="\/assets\/[^"/]+\.js"/);
    }
    expect(html).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    const src = /src="([^"]+)"/.exec(scripts[0]![1]!)![1]!;
    const js = await api(src);
    expect(js.status).toBe(200);
    expect(js.headers.get("Content-Type")).toMatch(/javascript/);
    expect(js.headers.get("Cache-Control")).toContain("immutable");
    await js.arrayBuffer();
  });

  it("answers the page for client-side routes, so a reload of /chat?session=... works", async () => {
    for (const path of ["/sessions", "/chat?session=ses_x", "/latex", "/some/deep/page"]) {
      const res = await api(path);
      expect(res.status, path).toBe(200);
      expect(await res.text(), path).toContain('<div id="app">');
      expect(res.headers.get("Content-Security-Policy"), path).toContain("default-src 'none'");
    }
  });

  it("keeps JSON 404/405 for unknown API, compile, hook and docs paths", async () => {
    const { key } = await createKey();
    for (const path of ["/api/nope", "/api", "/v1/nope", "/v1/compile/nope", "/hooks/nope", "/docs/nope.js", "/openapi.json/x"]) {
      const res = await api(path, { key });
      expect(res.status, path).toBe(404);
      expect(res.headers.get("Content-Type"), path).toMatch(/^application\/json/);
      expect(await errorCode(res), path).toBe("not_found");
    }
    // A known API path under another method keeps its 405.
    const res = await api("/api/sessions", { method: "PATCH", key });
    expect(res.status).toBe(405);
    expect(await errorCode(res)).toBe("method_not_allowed");
  });

  it("never answers the page for a missing build file or a non-GET request", async () => {
    const missing = await api("/assets/nope-123.js");
    expect(missing.status).toBe(404);
    expect(await errorCode(missing)).toBe("not_found");
    const post = await api("/sessions", { method: "POST", body: "{}" });
    expect(post.status).toBe(404);
    expect(await errorCode(post)).toBe("not_found");
  });
});
