export { streamRoutes } from "./router.ts";
export { streamTicketAuth, STREAM_PATH } from "./service.ts";
export { EventStreamDO } from "./stream-do.ts";
export { publishToStreams } from "./publish.ts";
export { purgeExpiredTickets } from "./tickets.ts";
