/** The compile service: /v1/compile routes, the COMPILE_QUEUE consumer, its cron, the Container class. */
export { compileRoutes } from "./router.ts";
export { handleCompileQueue, onCronCompile } from "./consumer.ts";
export { TexContainer } from "./container.ts";
