// Copies the API reference viewer (swagger-ui-dist, pinned in package.json) into the Worker's static
// assets (`public/docs/vendor/`, not committed): `/docs` then loads nothing from a third-party origin.
// Run by `npm run dev`, `npm run deploy` and the Workers test config, so the copy always matches the
// installed package.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const FILES = ["swagger-ui-bundle.js", "swagger-ui.css"];

export function copyDocsAssets(): void {
  const from = join(root, "node_modules", "swagger-ui-dist");
  const to = join(root, "public", "docs", "vendor");
  mkdirSync(to, { recursive: true });
  for (const f of FILES) {
    const [src, dst] = [join(from, f), join(to, f)];
    // an unchanged copy is left alone: `npm test` starts a dev server beside the Workers suite, and a
    // copy rewritten while the other one's runtime reads it would be served truncated
    if (!existsSync(dst) || !readFileSync(dst).equals(readFileSync(src))) copyFileSync(src, dst);
  }
  const { version } = JSON.parse(readFileSync(join(from, "package.json"), "utf8")) as { version: string };
  const stamp = join(to, "VERSION");
  if (!existsSync(stamp) || readFileSync(stamp, "utf8") !== version) writeFileSync(stamp, version);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) copyDocsAssets();
