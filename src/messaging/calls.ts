import { z } from "@hono/zod-openapi";

/** A call on a session's number, as `call.started` and `call.ended` carry it (calls are not stored as messages). */
export const Call = z
  .object({
    id: z.string().openapi({ description: "The network's id of the call.", example: "wacid.HBgLMTY1MDM4Nzk0MzkVAgARGBJDQjZCMzlEQUE4OTJBMTE4RTUA" }),
    sessionId: z.string(),
    chatId: z.string().openapi({ description: "The other party's chat.", example: "16505551234@c.us" }),
    direction: z.enum(["inbound", "outbound"]).openapi({ description: "`inbound`: the person called the business; `outbound`: the business called." }),
    event: z.enum(["connect", "terminate"]).openapi({ description: "`connect`: the call is ringing or connecting; `terminate`: it ended." }),
    status: z.string().nullable().openapi({ description: "How it ended, as the network says (`COMPLETED`, `FAILED`, ...).", example: "COMPLETED" }),
    startedAt: z.string().nullable(),
    endedAt: z.string().nullable(),
    durationSeconds: z.number().int().nullable(),
    at: z.string().openapi({ description: "When the network reported this step." }),
  })
  .openapi("Call");
export type Call = z.infer<typeof Call>;
