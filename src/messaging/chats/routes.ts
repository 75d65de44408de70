import { AUTHED_ERRORS, jsonBody, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { pageOf } from "../../platform/pagination.ts";
import { Chat, ChatIdParam, ChatListQuery, MarkReadBody } from "./schemas.ts";

const route = routeGroup({ tags: ["Chats"], errors: AUTHED_ERRORS });

export const listChatsRoute = route("get", "/api/chats", "A session's conversations, newest activity first", {
  description: "Each chat with its contact (if any), last message, unread count and the 24-hour customer-service window.",
  request: { query: ChatListQuery }, responses: { 200: jsonResponse(pageOf(Chat, "ChatPage"), "A page of chats") }, errors: [404],
});

export const markReadRoute = route("post", "/api/chats/{chatId}/read", "Mark a chat's inbound messages read", {
  description:
    "Sets `readAt` on its unread inbound messages and clears the unread count. The network is told first: on whatsapp sessions the Cloud API (`status: read` for the last inbound message, which marks the earlier ones too; if it refuses, nothing changes here); on sandbox sessions, the unread messages that came from another sandbox session of the account become `read` there (with `message.read`).",
  request: { params: ChatIdParam, body: jsonBody(MarkReadBody) }, responses: { 200: jsonResponse(Chat, "The chat, read") }, errors: [404, 409, 413, 415, 422, 503],
});
