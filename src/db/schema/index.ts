// Every table of the product; drizzle-kit reads src/db/schema/*.ts, the app imports from here.
export * from "./platform.ts";
export * from "./compile.ts";
export * from "./compile-assets.ts";
export * from "./webhooks.ts";
export * from "./messaging.ts";
export * from "./campaigns.ts";
