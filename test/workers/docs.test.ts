import { describe, expect, it } from "vitest";
import { api } from "./helpers.ts";

describe("/docs", () => {
  it("loads only same-origin files, under a CSP that forbids inline and third-party scripts", async () => {
    const res = await api("/docs");
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).not.toMatch(/(https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    const csp = res.headers.get("Content-Security-Policy") ?? "";
    const scriptSrc = csp.split(";").map((d) => d.trim()).find((d) => d.startsWith("script-src"));
    expect(scriptSrc).toBe("script-src 'self'");
    expect(csp).toContain("default-src 'none'");

    // No inline script: every <script> has a same-origin src and no body.
    const scripts = [...html.matchAll(/<script\b([^>]*)>([^<]*)<\/script>/g)];
    expect(scripts.length).toBeGreaterThanOrEqual(2);
    for (const [, attrs, body] of scripts) {
      expect(body!.trim()).toBe("");
      expect(attrs).toMatch(/\ssrc="\/[^/]/);
    }
    const srcs = scripts.map(([, attrs]) => /src="([^"]+)"/.exec(attrs!)![1]!);
    const styles = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]!);
    expect(styles.length).toBeGreaterThanOrEqual(1);
    expect(styles.every((s) => s.startsWith("/"))).toBe(true);

    for (const src of srcs) {
      const js = await api(src);
      expect(js.status, src).toBe(200);
      expect(js.headers.get("Content-Type"), src).toMatch(/^(text|application)\/javascript/);
      expect((await js.text()).length, src).toBeGreaterThan(100);
    }
    for (const href of styles) {
      const css = await api(href);
      expect(css.status, href).toBe(200);
      expect(css.headers.get("Content-Type"), href).toMatch(/^text\/css/);
      await css.arrayBuffer();
    }
  });

  it("points the viewer at this origin's /openapi.json", async () => {
    const init = await (await api("/docs/init.js")).text();
    expect(init).toContain('url: "/openapi.json"');
    expect(init).toContain("validatorUrl: null");
  });

  it("answers unknown /docs paths with the JSON 404", async () => {
    const res = await api("/docs/nope.js");
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("not_found");
  });
});
