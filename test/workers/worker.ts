import { createWorker } from "../../src/index.ts";
import { QUEUE_CONSUMERS } from "../../src/queues.ts";
import { tapEvents, tapFanOutNow } from "./event-tap.ts";
import { routeTestLogs } from "./log-routing.ts";

// Log lines go to the runtime's own console (see log-routing.ts).
routeTestLogs();
tapFanOutNow();

/** The Worker under test: the real one, its events consumer and the sessions' own fan-outs tapped so tests can see every event. */
export { EventStreamDO, PortfolioDO, RateLimiter, SessionDO, TexContainer, WebhookThrottleDO } from "../../src/index.ts";

export default createWorker({ ...QUEUE_CONSUMERS, "texmsg-events": tapEvents(QUEUE_CONSUMERS["texmsg-events"]) });
