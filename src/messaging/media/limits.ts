/**
 * What each media type accepts when uploaded as base64 (the WhatsApp Cloud API's own limits, so a
 * file accepted here is accepted by the network). Documented in the README.
 */
export const MEDIA_TYPES = ["image", "video", "audio", "document", "sticker"] as const;
export type MediaType = (typeof MEDIA_TYPES)[number];

const MiB = 1024 * 1024;

export const MEDIA_LIMITS: Record<MediaType, { maxBytes: number; mimetypes: string[] }> = {
  image: { maxBytes: 5 * MiB, mimetypes: ["image/jpeg", "image/png"] },
  // Animated stickers may have 500 KB; static ones 100 KB (the network checks which it is).
  sticker: { maxBytes: 500 * 1024, mimetypes: ["image/webp"] },
  video: { maxBytes: 16 * MiB, mimetypes: ["video/mp4", "video/3gpp"] },
  audio: { maxBytes: 16 * MiB, mimetypes: ["audio/aac", "audio/amr", "audio/mpeg", "audio/mp4", "audio/ogg"] },
  document: {
    // 100 MiB on the network, but the request body limit (22 MiB of base64) caps uploads at 16 MiB.
    maxBytes: 16 * MiB,
    mimetypes: [
      "application/pdf",
      "text/plain",
      "text/csv",
      "application/msword",
      "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
      "application/vnd.ms-excel",
      "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
      "application/vnd.ms-powerpoint",
      "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ],
  },
};

/** Decoded size of a base64 string without decoding it. */
export function base64Size(b64: string): number {
  const len = b64.length;
  const pad = b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0;
  return Math.floor((len * 3) / 4) - pad;
}

/** Whether inbound media still has to be fetched: it names a network file or a URL, and is not stored yet. */
export function needsFetch(media: { mediaId?: string | null; networkMediaId?: string | null; sourceUrl?: string | null }): boolean {
  return !media.mediaId && !!(media.networkMediaId || media.sourceUrl);
}
