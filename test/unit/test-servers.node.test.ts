// The Node servers the Workers tests talk to (webhook receiver, fake Graph API, compile callback
// receiver) never close an idle keep-alive connection: a client reusing one as the server closes it
// fails unanswered ("Network connection lost"), which under load failed whichever test was running
// (test/support/idle-connections.ts).
import http from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { REFERENCE } from "../support/fake-graph-setup.ts";
import { startFakeGraph } from "../support/fake-graph.ts";
import { startReceiver } from "../support/receiver.ts";
import { startReceiver as startCallbackReceiver } from "../workers/compile/global-setup.ts";

// Longer than Node's default idle close (keepAliveTimeout 5 s plus its 1 s buffer) and the receiver's former 1 s.
const IDLE_MS = 6_500;

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers) await close();
});

/** GET on the agent's one connection: the status, and whether it went over a connection used before. */
function get(agent: http.Agent, url: string): Promise<{ status: number; reused: boolean }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
    });
    req.on("error", reject);
  });
}

describe("test servers: an idle connection stays open until the client closes it", () => {
  it(`the receiver, the fake Graph API and the callback receiver answer on the same connection after ${IDLE_MS} ms idle`, { timeout: IDLE_MS + 10_000 }, async () => {
    const receiver = await startReceiver();
    const graph = await startFakeGraph(REFERENCE);
    const callbacks = await startCallbackReceiver();
    closers.push(receiver.close, graph.close, callbacks.close);
    const urls = [`${receiver.url}/inbox/idle`, `${graph.url}/__fake/invalid`, `${callbacks.url}/_received`];
    const agents = urls.map(() => new http.Agent({ keepAlive: true, maxSockets: 1 }));
    closers.push(async () => agents.forEach((a) => a.destroy()));
    const first = await Promise.all(urls.map((u, i) => get(agents[i]!, u)));
    expect(first).toEqual(urls.map(() => ({ status: 200, reused: false })));
    await new Promise((r) => setTimeout(r, IDLE_MS));
    // A connection the server had closed would have left the agent's pool: the request would open a new one.
    const second = await Promise.all(urls.map((u, i) => get(agents[i]!, u)));
    expect(second).toEqual(urls.map(() => ({ status: 200, reused: true })));
  });
});
