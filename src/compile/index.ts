/** The compile service: /v1/compile routes, the COMPILE_QUEUE consumer, its cron, the Container class. */
export { compileRoutes } from "./router.ts";
export { handleCompileQueue, onCronCompile } from "./consumer.ts";
export { TexContainer } from "./container.ts";
// compile assets: /v1/assets and their idle expiry
export { assetRoutes } from "./assets/router.ts";
export { expireAssets } from "./assets/expiry.ts";
