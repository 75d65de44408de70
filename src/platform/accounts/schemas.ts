import { z } from "@hono/zod-openapi";
import { idParam } from "../openapi.ts";
import { PLANS } from "../plans.ts";

export const Account = z
  .object({
    id: z.string().openapi({ example: "acc_0mh8k2x1qa1b2c3d4e5f6" }),
    name: z.string(),
    plan: z.enum(PLANS),
    rateLimitPerMinute: z.number().int().openapi({ description: "Requests per minute per API key." }),
    createdAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("Account");

export const ApiKey = z
  .object({
    id: z.string().openapi({ example: "key_0mh8k2x1qa1b2c3d4e5f6" }),
    name: z.string(),
    prefix: z.string().openapi({ description: "First characters of the key, to recognise it.", example: "tmk_Ab3dE5fG" }),
    createdAt: z.string().openapi({ format: "date-time" }),
    revokedAt: z.string().nullable().openapi({ format: "date-time" }),
  })
  .openapi("ApiKey");

export const CreatedApiKey = ApiKey.extend({ key: z.string().openapi({ description: "The secret. Shown only in this response." }) }).openapi("CreatedApiKey");

export const CreateKeyBody = z.strictObject({ name: z.string().trim().min(1).max(100).openapi({ example: "ci" }) }).openapi("CreateApiKey");
export const KeyIdParam = idParam();

export type KeyView = z.infer<typeof ApiKey>;
export type AccountView = z.infer<typeof Account>;
