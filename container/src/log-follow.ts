// A running pass's log, followed for the job's progress events: the new bytes of the log file a
// few times a second, read through the job folder's handles (workdir.ts), a bounded amount per look.
import type { JobEvents } from "./job-events.ts";
import type { WorkDir } from "./workdir.ts";

const EVERY_MS = 250;
/** At most this much per look; a log growing faster is followed from its newest part. */
const MAX_READ = 64 * 1024;

export interface LogFollower {
  /** One last look (the end of the pass's log), then no more. */
  stop(): Promise<void>;
}

export function followLog(work: WorkDir, rel: string, events: JobEvents, everyMs = EVERY_MS): LogFollower {
  let offset = 0;
  let stopped = false;
  let reading: Promise<void> = Promise.resolve();
  const look = async () => {
    const r = await work.readFrom(rel, offset, MAX_READ).catch(() => undefined);
    if (!r) return;
    if (r.size < offset) offset = 0; // a new log of the same name
    else if (r.size - offset > MAX_READ) {
      // far behind: skip to the newest part, from a line's start
      const from = r.size - MAX_READ;
      const again = await work.readFrom(rel, from, MAX_READ).catch(() => undefined);
      if (!again) return;
      const nl = again.data.indexOf(10);
      offset = from + again.data.length;
      events.output(nl >= 0 ? again.data.subarray(nl + 1) : Buffer.alloc(0));
      return;
    }
    offset += r.data.length;
    if (r.data.length > 0) events.output(r.data);
  };
  const timer = setInterval(() => {
    reading = reading.then(look);
  }, everyMs);
  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      await reading;
      await look();
      events.flushPartial();
    },
  };
}
