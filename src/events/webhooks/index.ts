export { webhookRoutes } from "./router.ts";
