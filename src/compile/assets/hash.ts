import { z } from "@hono/zod-openapi";

/** An asset's name: the SHA-256 of its bytes as `sha256sum` prints it. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;

export const AssetHash = z
  .string()
  .regex(SHA256_HEX, { message: "must be a SHA-256 as 64 lowercase hex digits" })
  .openapi({ description: "SHA-256 of the asset's bytes, 64 lowercase hex digits (`sha256sum`).", example: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" });
