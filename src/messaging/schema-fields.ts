import { z } from "@hono/zod-openapi";

// Field groups several messaging resources share, spread into their z.object shapes so the
// OpenAPI document lists them inline, in place.

/** Creation and last change of a resource (ISO 8601). */
export const Timestamps = { createdAt: z.string(), updatedAt: z.string() };

/** How many of a set of outbound messages (a batch, a campaign) are in each state. */
export const DeliveryCounts = {
  total: z.number().int(),
  pending: z.number().int(),
  sent: z.number().int(),
  delivered: z.number().int(),
  read: z.number().int(),
  failed: z.number().int(),
};

/** When an outbound message reached each state; null until it does. */
export const DeliveryTimes = { sentAt: z.string().nullable(), deliveredAt: z.string().nullable(), readAt: z.string().nullable() };
