export { streamRoutes, streamTicketAuth, STREAM_PATH } from "./handlers.ts";
export { EventStreamDO } from "./stream-do.ts";
export { publishToStreams } from "./publish.ts";
export { purgeExpiredTickets } from "./tickets.ts";
