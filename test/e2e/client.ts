import { inject } from "vitest";
import { spawn } from "node:child_process";
import { ROOT } from "./harness.ts";

export const baseUrl = () => inject("baseUrl");

/** The keys CLI against the suite's dev server, as a user would run it. */
export function keysCli(args: string[]): Promise<string> {
  return new Promise((res, rej) => {
    const child = spawn("npm", ["run", "-s", "keys", "--", ...args], { cwd: ROOT, env: { ...process.env, PERSIST_TO: inject("persistTo") }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    child.on("close", (code) => (code === 0 ? res(out) : rej(new Error(err || out))));
  });
}

export async function newKey(plan: "free" | "pro" | "enterprise" = "pro", extra: string[] = []): Promise<string> {
  const out = await keysCli(["create", "--name", "e2e", "--plan", plan, ...extra]);
  return out.trim().split("\n").pop()!.trim();
}

export function call(path: string, init: RequestInit & { key?: string; json?: unknown } = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (init.key) headers.set("Authorization", `Bearer ${init.key}`);
  let body = init.body;
  if (init.json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(init.json);
  }
  return fetch(`${baseUrl()}${path}`, { ...init, headers, body });
}
