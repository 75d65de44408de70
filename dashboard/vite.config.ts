// The browser console: built into the Worker's static assets (public/index.html + public/assets/)
// by scripts/dashboard-build.ts, which `npm run dev`, `npm test` and `npm run deploy` run.
import { fileURLToPath } from "node:url";
import preact from "@preact/preset-vite";
import { defineConfig } from "vite";

const root = fileURLToPath(new URL(".", import.meta.url));

export default defineConfig({
  root,
  base: "/",
  publicDir: false,
  plugins: [preact()],
  build: {
    outDir: fileURLToPath(new URL("../public", import.meta.url)),
    // public/ also holds the /docs viewer: only our own files are replaced (the build script clears them).
    emptyOutDir: false,
    assetsDir: "assets",
    // Same-origin modules only; the polyfill is not needed by the browsers we target.
    modulePreload: { polyfill: false },
    target: "es2022",
    reportCompressedSize: false,
    chunkSizeWarningLimit: 2000,
  },
});
