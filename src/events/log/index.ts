export { eventLogRoutes } from "./router.ts";
