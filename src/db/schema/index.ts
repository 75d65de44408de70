// Every table of the product, of both databases; the app imports from here. drizzle-kit reads the
// directory's files (drizzle.config.ts) and the shards' (drizzle.shard.config.ts).
export * from "./platform.ts";
export * from "./compile.ts";
export * from "./compile-assets.ts";
export * from "./webhooks.ts";
export * from "./messaging.ts";
export * from "./campaigns.ts";
export * from "./directory.ts";
