import type { TemplateSpec } from "../messages/schemas.ts";

/** A message as a network driver sends it. */
export interface OutboundMessage {
  /** Recipient digits (E.164 without "+"). */
  to: string;
  type: "text" | "template" | "image" | "video" | "audio" | "document";
  text?: string;
  template?: TemplateSpec;
  media?: { link: string; caption?: string | null; filename?: string | null };
  /** The network's id of the message replied to. */
  replyToExternalId?: string | null;
}

export interface FailureReason {
  code: string;
  message: string;
}

export type NetworkSendResult =
  | { ok: true; externalId: string | null }
  | {
      ok: false;
      error: FailureReason;
      /** Transient (rate limit, network down): a queued send is retried after this long. */
      retryAfterMs?: number;
      /** The failure says the session itself is broken (e.g. the token was revoked). */
      sessionFailure?: string;
    };

export type ConnectResult = { ok: true; phoneNumber: string } | { ok: false; reason: string; message: string; transient?: boolean };

/** The one small interface every network implements. Inbound parsing is per network (see whatsapp.ts). */
export interface NetworkDriver {
  connect(): Promise<ConnectResult>;
  send(message: OutboundMessage): Promise<NetworkSendResult>;
}
