import { z } from "@hono/zod-openapi";

export const SessionParam = z.object({ sessionId: z.string().max(64).openapi({ param: { name: "sessionId", in: "path" } }) });
export const MediaParam = z.object({ mediaId: z.string().max(64).openapi({ param: { name: "mediaId", in: "path" } }) });
export const MediaQuery = z.object({ exp: z.string().max(16).optional(), sig: z.string().max(128).optional() });
