// The compile server's tests: plain Node environment, real TeX, generous timeouts. Two groups, one
// after the other: the files that only send jobs, in parallel against one shared server (started
// by the global setup), then the files that start a server of their own configuration (or read
// its queue, counters, processes or timing), one at a time: 2-core CI. preamble-corpus runs in the
// first group with servers of its own: it mostly waits for their dumps, which run at the lowest
// priority, so the other files' compiles fill the cores meanwhile.
import path from "node:path";
import { defineConfig } from "vitest/config";
import { resolveTexRoot, TEX_ROOT_BIN } from "./src/texroot.ts";

// With a TeX root filesystem (npm run tex:ensure) the servers' jobs run its TeX: what the tests run
// themselves (bare engines, kpsewhich, pdftotext) must be the same, through its wrappers
const texRoot = resolveTexRoot(process.env);
if (texRoot && !process.env.PATH?.startsWith(path.join(texRoot, TEX_ROOT_BIN))) process.env.PATH = `${path.join(texRoot, TEX_ROOT_BIN)}:${process.env.PATH ?? "/usr/bin:/bin"}`;

/** Files that talk to the shared server only (shared-server.ts says what they may not assume). */
const SHARED = ["compile", "corpus", "packages", "passes", "project", "shell-escape", "tools-untrusted", "project-names", "project-fonts", "project-installed", "projects-corpus", "outputs", "outputs-synctex"].map((n) => `test/${n}.test.ts`);
/** Run beside them: the files that send only jobs to servers of their own and assume nothing about timing. */
const PARALLEL = [...SHARED, "test/preamble-corpus.test.ts"];

export default defineConfig({
  test: {
    root: import.meta.dirname,
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        // four at a time: preamble-corpus holds one for the whole group
        test: { name: "compile-server (shared server)", include: PARALLEL, globalSetup: ["test/global-setup.ts"], fileParallelism: true, maxWorkers: 4, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        test: { name: "compile-server", include: ["test/**/*.test.ts"], exclude: PARALLEL, globalSetup: ["test/tex-setup.ts"], fileParallelism: false, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
