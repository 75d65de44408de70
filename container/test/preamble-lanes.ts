// What preamble.test.ts and preamble-corpus.test.ts share: the edit an author makes between
// compiles, and the two servers their comparisons run on.
import type { RunningServer } from "../src/server.ts";

/** A small change in the body (after \begin{document}), as an author makes between compiles. */
export function editBody(source: string): string {
  return source.replace("\\begin{document}", "\\begin{document}\nEdited line. ");
}

/** Runs at most `n` of the functions given to it at once. */
function limiter(n: number): <T>(f: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (f) => {
    while (running >= n) await new Promise<void>((r) => waiting.push(r));
    running++;
    try {
      return await f();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/**
 * Case `i` runs on server `i % 2`, one case at a time per server. A case waits for its server's
 * dumps to finish (`preambles.idle()`) and a server dumps one preamble at a time, so with one
 * server two cases would wait for each other's dump; two servers keep both cores busy.
 */
export function onEitherServer(servers: () => [RunningServer, RunningServer]): <T>(i: number, f: (srv: RunningServer) => Promise<T>) => Promise<T> {
  const lanes = [limiter(1), limiter(1)];
  return (i, f) => lanes[i % 2]!(() => f(servers()[i % 2]!));
}
