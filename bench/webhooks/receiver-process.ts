// The benchmark's webhook receiver in a process of its own (test/support/receiver.ts, same API: `url`,
// `PUT`/`GET /inbox/<name>`). In the benchmark's process its arrival stamps shared one event loop with
// the cause senders and the inbox polls: a busy moment there stamped several arrivals at once, a burst
// the worker never sent. A receiver of its own is also what a real endpoint is.
// Run directly (`node bench/webhooks/receiver-process.ts --serve`) it serves and tells its parent the url.
import { fork } from "node:child_process";
import { startReceiver } from "../../test/support/receiver.ts";

export interface ReceiverProcess {
  url: string;
  close(): Promise<void>;
}

const STARTUP_MS = 30_000;

/** Starts the receiver in a child process; resolves with its url once it listens. */
export function startReceiverProcess(): Promise<ReceiverProcess> {
  const child = fork(import.meta.filename, ["--serve"], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`receiver process did not start within ${STARTUP_MS} ms`));
    }, STARTUP_MS);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`receiver process exited (${code}) before it listened`));
    });
    child.once("message", (msg: { url?: unknown }) => {
      clearTimeout(timer);
      if (typeof msg?.url !== "string") return reject(new Error("receiver process sent no url"));
      resolve({
        url: msg.url,
        close: async () => {
          // Disconnecting tells the child to close its server and exit.
          if (child.connected) child.disconnect();
          const killer = setTimeout(() => child.kill(), 5_000);
          await exited;
          clearTimeout(killer);
        },
      });
    });
  });
}

if (process.argv[2] === "--serve" && process.send) {
  const receiver = await startReceiver();
  process.send({ url: receiver.url });
  process.once("disconnect", () => void receiver.close().then(() => process.exit(0)));
}
