import { describe, expect, it } from "vitest";
import { chatIdOf, parseAddress } from "../../src/messaging/chat-id.ts";
import { isStop } from "../../src/messaging/sessions/inbound.ts";
import { base64Size } from "../../src/messaging/media/limits.ts";
import { graphMessageBody } from "../../src/messaging/networks/whatsapp.ts";
import { mapGraphError } from "../../src/messaging/networks/whatsapp-errors.ts";
import { parseWebhook, verifyHubSignature } from "../../src/messaging/networks/whatsapp-hook.ts";
import { sandboxSend } from "../../src/messaging/networks/sandbox.ts";
import { canAdvance, statusesBetween } from "../../src/messaging/status.ts";

describe("chat ids", () => {
  it.each([
    ["+14155550123", "14155550123"],
    ["14155550123", "14155550123"],
    ["14155550123@c.us", "14155550123"],
    ["14155550123@s.whatsapp.net", "14155550123"],
    [" 14155550123@S.WHATSAPP.NET ", "14155550123"],
  ])("%s -> %s", (input, digits) => expect(parseAddress(input)).toBe(digits));

  it.each(["", "abc", "+0123456789", "123", "1234567890123456", "1415555@g.us", "14155550123@c.us@c.us", "+1 415 555 0123"])("rejects %j", (input) => {
    expect(parseAddress(input)).toBeNull();
  });

  it("responses use @c.us", () => expect(chatIdOf("14155550123")).toBe("14155550123@c.us"));
});

describe("message status", () => {
  it("only moves forward", () => {
    expect(canAdvance("sent", "delivered")).toBe(true);
    expect(canAdvance("sent", "read")).toBe(true);
    expect(canAdvance("read", "delivered")).toBe(false);
    expect(canAdvance("delivered", "sent")).toBe(false);
    expect(canAdvance("failed", "sent")).toBe(false);
    expect(canAdvance("read", "failed")).toBe(false);
    expect(canAdvance("pending", "failed")).toBe(true);
  });

  it("a jump passes through the skipped steps", () => {
    expect(statusesBetween("sent", "read")).toEqual(["delivered", "read"]);
    expect(statusesBetween("pending", "delivered")).toEqual(["sent", "delivered"]);
    expect(statusesBetween("read", "delivered")).toEqual([]);
  });
});

describe("sandbox network", () => {
  it("999 numbers have no account", () => {
    expect(sandboxSend({ to: "9991234567", type: "text" })).toMatchObject({ ok: false, error: { code: "no_account" } });
    expect(sandboxSend({ to: "14155550123", type: "text" })).toEqual({ ok: true, externalId: null });
  });
});

describe("WhatsApp Cloud API mapping", () => {
  it.each([
    [401, 190, "invalid_token", "invalid_token"],
    [400, 130429, "rate_limited", undefined],
    [400, 131047, "reengagement_window_closed", undefined],
    [400, 131026, "undeliverable", undefined],
    [500, 131000, "network_unavailable", undefined],
    [400, 100, "network_rejected", undefined],
  ])("HTTP %i code %i -> %s", (status, code, reason, sessionFailure) => {
    const mapped = mapGraphError(status, code, "msg");
    expect(mapped.error.code).toBe(reason);
    expect(mapped.sessionFailure).toBe(sessionFailure);
  });

  it("rate limits and outages are retryable; window and undeliverable are not", () => {
    expect(mapGraphError(400, 130429, "").retryAfterMs).toBeGreaterThan(0);
    expect(mapGraphError(400, 131047, "").retryAfterMs).toBeUndefined();
  });

  it("builds Cloud API bodies", () => {
    expect(graphMessageBody({ to: "1", type: "text", text: "hi", replyToExternalId: "wamid.1" })).toEqual({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: "1",
      type: "text",
      text: { body: "hi", preview_url: false },
      context: { message_id: "wamid.1" },
    });
    expect(graphMessageBody({ to: "1", type: "template", template: { name: "t", language: "en_US" } }).template).toEqual({ name: "t", language: { policy: "deterministic", code: "en_US" } });
    expect(graphMessageBody({ to: "1", type: "audio", media: { link: "https://x/a.ogg", caption: "dropped" } }).audio).toEqual({ link: "https://x/a.ogg" });
  });

  it("verifies X-Hub-Signature-256", async () => {
    const body = '{"a":1}';
    // echo -n '{"a":1}' | openssl dgst -sha256 -hmac secret
    const good = "sha256=" + (await hex("secret", body));
    expect(await verifyHubSignature("secret", body, good)).toBe(true);
    expect(await verifyHubSignature("secret", body, good.toUpperCase().replace("SHA256", "sha256"))).toBe(true);
    expect(await verifyHubSignature("other", body, good)).toBe(false);
    expect(await verifyHubSignature("secret", body + " ", good)).toBe(false);
    expect(await verifyHubSignature("secret", body, null)).toBe(false);
    expect(await verifyHubSignature("secret", body, "sha1=abc")).toBe(false);
  });

  it("parses messages and statuses of a webhook payload; a malformed message is kept as unsupported", () => {
    const parsed = parseWebhook({
      entry: [
        {
          changes: [
            {
              value: {
                metadata: { display_phone_number: "15550783881", phone_number_id: "106540352242922" },
                contacts: [{ wa_id: "16505551234", profile: { name: "Sheena" } }],
                messages: [
                  { from: "16505551234", id: "wamid.A", timestamp: "1749416383", type: "text", text: { body: "hi" } },
                  { from: "16505551234", id: "wamid.B", timestamp: "1749416384", type: "image", image: { mime_type: "image/jpeg", caption: "c" } },
                  { from: "16505551234", id: "wamid.C", timestamp: "1749416385", type: "reaction", reaction: {} },
                ],
                statuses: [{ id: "wamid.X", status: "failed", timestamp: "1749416390", recipient_id: "1", errors: [{ code: 131026, title: "x" }] }],
              },
            },
          ],
        },
      ],
    }, "106540352242922");
    expect(parsed.messages).toHaveLength(3);
    expect(parsed.messages[0]).toMatchObject({ externalId: "wamid.A", from: "16505551234", type: "text", text: "hi", profileName: "Sheena", timestamp: 1749416383000 });
    expect(parsed.messages[1]).toMatchObject({ type: "image", media: { mimetype: "image/jpeg", caption: "c" } });
    expect(parsed.statuses).toEqual([{ externalId: "wamid.X", status: "failed", timestamp: 1749416390000, error: expect.objectContaining({ code: "undeliverable" }), detail: { networkError: { code: 131026, title: "x" } } }]);
    expect(parsed.messages[2]).toMatchObject({ externalId: "wamid.C", type: "unsupported" });
    expect(parsed.skipped).toBe(0);
    expect(parseWebhook(null, "106540352242922")).toEqual({ messages: [], statuses: [], skipped: 0, otherNumber: 0, acknowledged: {}, amendments: [], health: null, preferences: [], notices: [], echoes: [], calls: [], templates: [] });
  });

  it("leaves out changes for another phone number of the same app, or without one", () => {
    const change = (phoneNumberId: string | undefined, id: string) => ({
      field: "messages",
      value: {
        ...(phoneNumberId ? { metadata: { display_phone_number: "15550783881", phone_number_id: phoneNumberId } } : {}),
        messages: [{ from: "16505551234", id, timestamp: "1749416383", type: "text", text: { body: "hi" } }],
        statuses: [{ id: `${id}.s`, status: "read", timestamp: "1749416390", recipient_id: "1" }],
      },
    });
    const parsed = parseWebhook({ entry: [{ changes: [change("111", "wamid.mine"), change("222", "wamid.theirs")] }, { changes: [change(undefined, "wamid.none")] }] }, "111");
    expect(parsed.messages.map((m) => m.externalId)).toEqual(["wamid.mine"]);
    expect(parsed.statuses.map((s) => s.externalId)).toEqual(["wamid.mine.s"]);
    expect(parsed.otherNumber).toBe(2);
  });
});

describe("misc", () => {
  it("STOP is a whole message, any case", () => {
    expect(isStop(" Stop ")).toBe(true);
    expect(isStop("stop please")).toBe(false);
    expect(isStop(undefined)).toBe(false);
  });

  it("base64 size without decoding", () => {
    for (const s of ["", "a", "ab", "abc", "abcd", "hello world!"]) expect(base64Size(btoa(s))).toBe(s.length);
  });
});

async function hex(secret: string, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", new TextEncoder().encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return [...new Uint8Array(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(body)))].map((b) => b.toString(16).padStart(2, "0")).join("");
}
