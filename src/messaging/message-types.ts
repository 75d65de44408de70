/**
 * Message types, in both directions (docs/contracts.md §3). Text, templates and media keep their own
 * columns; every other type's body is one JSON document (messages/content.ts).
 */
export const MESSAGE_TYPES = ["text", "template", "image", "video", "audio", "document", "sticker", "location", "contacts", "interactive", "button", "reaction", "order", "unsupported"] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** Types whose body is a file. */
export const FILE_TYPES = ["image", "video", "audio", "document", "sticker"] as const;
export type FileType = (typeof FILE_TYPES)[number];

export function isFileType(type: string): type is FileType {
  return (FILE_TYPES as readonly string[]).includes(type);
}
