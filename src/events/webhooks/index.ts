export { webhookRoutes } from "./handlers.ts";
