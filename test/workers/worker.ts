import { createWorker } from "../../src/index.ts";
import { QUEUE_CONSUMERS } from "../../src/queues.ts";
import { tapEvents } from "./event-tap.ts";
import { routeLogs } from "../../src/platform/log.ts";

// Log lines go to the runtime's own console, not the runner's (see routeLogs): background work
// logging after a test file ended must not hold the file open.
const runtimeConsole = (globalThis as { __console?: Console }).__console;
if (runtimeConsole) routeLogs(runtimeConsole);

/** The Worker under test: the real one, its events consumer tapped so tests can see every event queued. */
export { EventStreamDO, RateLimiter, SessionDO, TexContainer } from "../../src/index.ts";

export default createWorker({ ...QUEUE_CONSUMERS, "texmsg-events": tapEvents(QUEUE_CONSUMERS["texmsg-events"]) });
