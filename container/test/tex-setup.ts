// Fails early, with the install command, when TeX is not installed.
import { spawnSync } from "node:child_process";

export default function setup(): void {
  const r = spawnSync("kpsewhich", ["-var-value", "TEXMFROOT"], { encoding: "utf8" });
  if (r.status !== 0) {
    throw new Error("TeX Live is not installed: run `npm run tex:ensure` (as root) or see container/README.md");
  }
}
