import { ApiError, errors } from "../../platform/errors.ts";
import type { MediaInput } from "../messages/schemas.ts";
import { base64Size, MEDIA_LIMITS, type MediaType } from "./limits.ts";
import { putMedia } from "./store.ts";

export const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Checks a base64 upload against its type's limits and stores it. Throws ApiError. */
export async function storeUpload(env: Env, accountId: string, type: MediaType, media: Extract<MediaInput, { data: string }>, filename: string | undefined, prefix = "") {
  const limits = MEDIA_LIMITS[type];
  const mimetype = media.mimetype.toLowerCase().split(";")[0]!.trim();
  if (!limits.mimetypes.includes(mimetype)) {
    throw errors.invalidRequest(`${type} accepts ${limits.mimetypes.join(", ")}.`, [{ path: `${prefix}media.mimetype`, message: `not accepted for ${type}` }]);
  }
  const data = media.data.replace(/\s+/g, "");
  if (data.length % 4 !== 0 || !BASE64.test(data)) throw errors.invalidRequest("media.data must be base64.", [{ path: `${prefix}media.data`, message: "not base64" }]);
  const size = base64Size(data);
  if (size > limits.maxBytes) {
    throw new ApiError(413, "media_too_large", `${type} files are limited to ${limits.maxBytes} bytes; this one has ${size}.`, { limitBytes: limits.maxBytes, path: `${prefix}media.data` });
  }
  const put = await putMedia(env, accountId, data, mimetype, media.filename ?? filename);
  return { mimetype, size: put.size, mediaId: put.mediaId, filename: media.filename ?? filename ?? null };
}
