import { z } from "@hono/zod-openapi";

export const EventTypeInfo = z
  .object({
    type: z.string().openapi({ example: "message.received" }),
    description: z.string(),
    schema: z.record(z.string(), z.unknown()).openapi({ description: "JSON Schema (draft 2020-12) of the delivery body `{type, timestamp, data}`." }),
    example: z
      .object({ type: z.string(), timestamp: z.string(), data: z.record(z.string(), z.unknown()) })
      .openapi({ description: "An example delivery body." }),
  })
  .openapi("EventType");

export const EventTypeList = z.object({ data: z.array(EventTypeInfo) }).openapi("EventTypeList");
