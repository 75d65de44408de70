/**
 * Message types, in both directions (docs/contracts.md §3). Text, templates and media keep their own
 * columns; every other type's body is one JSON document (messages/content.ts). The list itself lives
 * with the table's schema.
 */
import { MESSAGE_TYPES } from "../db/schema/messaging.ts";

export { MESSAGE_TYPES };
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** Types whose body is a file. */
export const FILE_TYPES = ["image", "video", "audio", "document", "sticker"] as const;
export type FileType = (typeof FILE_TYPES)[number];

export function isFileType(type: string): type is FileType {
  return (FILE_TYPES as readonly string[]).includes(type);
}
