import { z } from "@hono/zod-openapi";
import { idempotency } from "../../platform/idempotency.ts";
import { AUTHED_ERRORS, idParam, jsonBody, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { pageOf } from "../../platform/pagination.ts";
import { Batch, BulkAccepted, ChatHistoryQuery, Message, SendBulkBody, SendMediaBody, SendTextBody } from "./schemas.ts";

const route = routeGroup({ tags: ["Messages"], errors: AUTHED_ERRORS });
/** The errors every send can answer besides the group's. */
const SEND_ERRORS = [404, 409, 413, 415, 422] as const;
const ChatIdPath = z.object({
  chatId: z.string().max(160).openapi({ param: { name: "chatId", in: "path" }, example: "14155550123@c.us", description: "`<digits>@c.us` or `<digits>@s.whatsapp.net` (or E.164); `<BSUID>@bsuid` for a person known only by their WhatsApp BSUID." }),
});

export const sendRoute = route("post", "/api/messages/send", "Send a text or template message", {
  description: "201 with the message: `sent` when the network accepted it, `failed` with `error` when it refused (e.g. `no_account`). Receipts move it to `delivered` and `read`.",
  middleware: [idempotency()] as const, request: { body: jsonBody(SendTextBody) },
  responses: { 201: jsonResponse(Message, "The message") }, errors: SEND_ERRORS,
});

export const sendMediaRoute = route("post", "/api/messages/send-media", "Send an image, video, audio or document (by URL or base64)", {
  description:
    "Base64 media is stored and served to the network by a signed, expiring URL. Limits: image 5 MiB (jpeg, png); video 16 MiB (mp4, 3gpp); audio 16 MiB (aac, amr, mpeg, mp4, ogg); document 16 MiB (pdf, txt, csv, Office). Over the limit: 413 `media_too_large`.",
  middleware: [idempotency()] as const, request: { body: jsonBody(SendMediaBody) },
  responses: { 201: jsonResponse(Message, "The message") }, errors: SEND_ERRORS,
});

export const sendBulkRoute = route("post", "/api/messages/send-bulk", "Queue up to 1,000 messages; sent through a queue at the session's pace", {
  middleware: [idempotency()] as const, request: { body: jsonBody(SendBulkBody) },
  responses: { 202: jsonResponse(BulkAccepted, "Accepted items queued; rejected items by index") }, errors: SEND_ERRORS,
});

export const getBatchRoute = route("get", "/api/messages/batches/{id}", "Progress of a bulk send", { request: { params: idParam() }, responses: { 200: jsonResponse(Batch, "Counts by status") }, errors: [404] });

export const mediaRoute = route("get", "/api/messages/{id}/media", "The file of a message: a redirect to a signed URL that expires in an hour", {
  description:
    "Inbound files are fetched from the network into storage on receipt: until then 409 `media_pending`; if that finally failed, 409 `media_failed` with the reason (also in the message's `media.reason`). Link media redirect to their link.",
  request: { params: idParam("msg_0m3x9k2a1b2c3d4e5f6g7h8") }, responses: { 302: { description: "`Location`: the file" } }, errors: [404, 409],
});

export const historyRoute = route("get", "/api/messages/{chatId}", "A chat's history in both directions, newest first", {
  request: { params: ChatIdPath, query: ChatHistoryQuery }, responses: { 200: jsonResponse(pageOf(Message, "MessagePage"), "A page of messages") }, errors: [404],
});
