import { createRoute } from "@hono/zod-openapi";
import { AUTHED_ERRORS, errorResponses, jsonBody, jsonResponse } from "../../platform/openapi.ts";
import { pageOf } from "../../platform/pagination.ts";
import { Chat, ChatIdParam, ChatListQuery, MarkReadBody } from "./schemas.ts";

const tags = ["Chats"];

export const listChatsRoute = createRoute({
  method: "get",
  path: "/api/chats",
  tags,
  summary: "A session's conversations, newest activity first",
  description: "Each chat with its contact (if any), last message, unread count and the 24-hour customer-service window.",
  request: { query: ChatListQuery },
  responses: { 200: jsonResponse(pageOf(Chat, "ChatPage"), "A page of chats"), ...errorResponses(...AUTHED_ERRORS, 404) },
});

export const markReadRoute = createRoute({
  method: "post",
  path: "/api/chats/{chatId}/read",
  tags,
  summary: "Mark a chat's inbound messages read",
  description: "Sets `readAt` on its unread inbound messages and clears the unread count. On whatsapp sessions the Cloud API is told first (`status: read` for the last inbound message, which marks the earlier ones too); if it refuses, nothing changes here.",
  request: { params: ChatIdParam, body: jsonBody(MarkReadBody) },
  responses: { 200: jsonResponse(Chat, "The chat, read"), ...errorResponses(...AUTHED_ERRORS, 404, 409, 413, 415, 422, 503) },
});
