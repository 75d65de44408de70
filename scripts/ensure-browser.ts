// Makes sure Debian's Chromium is installed for the browser suite (Playwright drives it; no browser
// download). Like scripts/ensure-tex.ts: present, exit 0; missing and root on Debian/Ubuntu: apt-get
// install; otherwise exit 1 with the exact command.
//   node scripts/ensure-browser.ts
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const installCmd = "apt-get update && apt-get install -y --no-install-recommends chromium";

function works(): boolean {
  if (!existsSync(CHROMIUM)) return false;
  const r = spawnSync(CHROMIUM, ["--headless", "--no-sandbox", "--version"], { encoding: "utf8", timeout: 30_000 });
  return r.status === 0 && /chrom/i.test(r.stdout);
}

export function ensureBrowser(): boolean {
  if (works()) return true;
  const debian = existsSync("/etc/os-release") && /^(ID|ID_LIKE)=.*(debian|ubuntu)/m.test(readFileSync("/etc/os-release", "utf8")) && existsSync("/usr/bin/apt-get");
  if (process.getuid?.() !== 0 || !debian || process.env.CHROMIUM_PATH) {
    console.error(`Chromium is missing (${CHROMIUM}); the browser tests need it. Install it with:\n\n  sudo sh -c '${installCmd}'\n`);
    return false;
  }
  console.log("Installing Chromium (apt-get) for the browser tests");
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  for (const args of [["update"], ["install", "-y", "--no-install-recommends", "chromium"]]) {
    const r = spawnSync("apt-get", args, { stdio: "inherit", env });
    if (r.status !== 0) {
      console.error(`apt-get ${args[0]} failed. Run:\n\n  ${installCmd}\n`);
      return false;
    }
  }
  if (!works()) {
    console.error(`Chromium still does not start after the install (${CHROMIUM}).`);
    return false;
  }
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (!ensureBrowser()) process.exit(1);
  console.log(`Chromium: installed (${CHROMIUM})`);
}
