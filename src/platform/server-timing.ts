import type { Context } from "hono";
import type { AppEnv, Timings } from "./types.ts";

/**
 * `Server-Timing` (W3C): where a request's time went, as browsers' devtools and `curl -i` show it.
 * Only I/O waits are meaningful: the Workers clock advances on I/O, not while JavaScript runs.
 */
export function addTiming(c: Context<AppEnv>, name: string, ms: number): void {
  c.get("timings")?.push({ name, ms });
}

/** Times an awaited step and records it under `name`. */
export async function timed<T>(c: Context<AppEnv>, name: string, step: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  try {
    return await step();
  } finally {
    addTiming(c, name, Date.now() - t0);
  }
}

export function formatServerTiming(timings: Timings, totalMs: number): string {
  return [...timings, { name: "total", ms: totalMs }].map((t) => `${t.name};dur=${t.ms}`).join(", ");
}
