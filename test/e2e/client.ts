import { inject } from "vitest";
import { createClient, type ApiClient } from "../../client/index.ts";
import { createKeyWithCli, keysCli as runKeysCli } from "./harness.ts";

export const baseUrl = () => inject("baseUrl");

/** The keys CLI against the suite's dev server, as a user would run it. */
export const keysCli = (args: string[]): Promise<string> => runKeysCli(inject("persistTo"), args);

export const newKey = (plan: "free" | "pro" | "enterprise" = "pro", extra: string[] = []): Promise<string> => createKeyWithCli(inject("persistTo"), plan, extra);

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

/** The typed client (client/) against the suite's dev server: what API users are given. */
export function typedClient(apiKey?: string): ApiClient {
  return createClient({ baseUrl: baseUrl(), ...(apiKey ? { apiKey } : {}) });
}
