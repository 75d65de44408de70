import { describe, expect, it } from "vitest";
import { contentDisposition, inertFileHeaders, isServedType, normalizeType, OCTET_STREAM, safeFilename, servedType, sniff } from "../../src/platform/inert-content.ts";

const bytes = (...parts: (string | number[])[]) => Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...p].map((c) => c.charCodeAt(0)) : p)));

/** One real header per allowed type (the first bytes of a file of it). */
const REAL: Array<[string, Uint8Array]> = [
  ["image/jpeg", bytes([0xff, 0xd8, 0xff, 0xe0, 0, 0x10], "JFIF")],
  ["image/png", bytes([0x89], "PNG", [0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d], "IHDR")],
  ["image/gif", bytes("GIF89a", [1, 0, 1, 0])],
  ["image/webp", bytes("RIFF", [0x24, 0, 0, 0], "WEBPVP8 ")],
  ["application/pdf", bytes("%PDF-1.7\n%\xe2\xe3")],
  ["audio/ogg", bytes("OggS", [0, 2, 0, 0, 0, 0, 0, 0, 0, 0])],
  ["audio/amr", bytes("#!AMR\n")],
  ["audio/mpeg", bytes("ID3", [4, 0, 0, 0, 0, 0, 0])],
  ["audio/mpeg", bytes([0xff, 0xfb, 0x90, 0x64])],
  ["audio/aac", bytes([0xff, 0xf1, 0x50, 0x80])],
  ["video/mp4", bytes([0, 0, 0, 0x20], "ftypisom", [0, 0, 2, 0])],
  ["audio/mp4", bytes([0, 0, 0, 0x20], "ftypM4A ", [0, 0, 0, 0])],
  ["video/3gpp", bytes([0, 0, 0, 0x14], "ftyp3gp4", [0, 0, 0, 0])],
];

describe("inert content: the served type comes from the bytes", () => {
  it.each(REAL)("%s is recognised by its magic number and served as declared", (type, head) => {
    expect(sniff(head)?.type).toBe(type);
    expect(servedType(type, head)).toEqual({ contentType: type, inline: type !== "application/pdf" });
  });

  it("a declared type the bytes do not have is not trusted: the bytes' own type, or a download", () => {
    const png = REAL[1]![1];
    expect(servedType("image/jpeg", png).contentType).toBe("image/png");
    expect(servedType("text/html", png).contentType).toBe("image/png");
    expect(servedType("image/svg+xml", png).contentType).toBe("image/png");
    for (const [declared, body] of [
      ["text/html", "<!doctype html><script>alert(document.cookie)</script>"],
      ["image/svg+xml", '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'],
      ["image/jpeg", "<html><body onload=alert(1)>"],
      ["application/javascript", "fetch('/api/keys')"],
      ["text/xml", "<?xml version='1.0'?><x/>"],
      ["application/pdf", "not a pdf at all"],
      [null, ""],
    ] as const) {
      expect(servedType(declared, bytes(body))).toEqual({ contentType: OCTET_STREAM, inline: false });
    }
  });

  it("the same container may keep its declared label; another one may not", () => {
    const mp4 = REAL[10]![1];
    expect(servedType("audio/mp4", mp4).contentType).toBe("audio/mp4");
    expect(servedType("video/3gpp", mp4).contentType).toBe("video/3gpp");
    expect(servedType("text/html", mp4).contentType).toBe("video/mp4");
    expect(servedType("audio/opus", REAL[5]![1]).contentType).toBe("audio/opus");
  });

  it("office documents by their container, plain text as declared, both downloaded", () => {
    const docx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document";
    expect(servedType(docx, bytes([0x50, 0x4b, 0x03, 0x04, 0x14, 0]))).toEqual({ contentType: docx, inline: false });
    expect(servedType("application/zip", bytes([0x50, 0x4b, 0x03, 0x04, 0x14, 0]))).toEqual({ contentType: OCTET_STREAM, inline: false });
    expect(servedType("application/msword", bytes([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))).toEqual({ contentType: "application/msword", inline: false });
    expect(servedType("text/plain; charset=utf-8", bytes("hello"))).toEqual({ contentType: "text/plain", inline: false });
    expect(servedType("text/csv", bytes("a,b\n1,2"))).toEqual({ contentType: "text/csv", inline: false });
  });

  it("declared types are normalised and bounded", () => {
    expect(normalizeType(" Image/JPEG ; charset=x")).toBe("image/jpeg");
    expect(normalizeType("")).toBeNull();
    expect(normalizeType(null)).toBeNull();
    expect(normalizeType("a".repeat(1_000_000))!.length).toBe(200);
    expect(servedType("IMAGE/PNG", REAL[1]![1]).contentType).toBe("image/png");
  });

  it("short or empty heads never match", () => {
    expect(sniff(bytes([0xff]))).toBeNull();
    expect(sniff(bytes("RIFF"))).toBeNull();
    expect(sniff(new Uint8Array(0))).toBeNull();
  });

  it("only types it could choose pass the stored-metadata guard", () => {
    for (const [type] of REAL) expect(isServedType(type)).toBe(true);
    for (const t of ["text/html", "image/svg+xml", "application/javascript", "text/xml", "application/xhtml+xml", "", null]) expect(isServedType(t)).toBe(false);
  });
});

describe("inert content: headers", () => {
  it("filenames keep only safe characters, never quotes, line breaks or a leading dot", () => {
    expect(safeFilename('a"b\r\nContent-Type: text/html;.pdf', "f")).toBe("a_b__Content-Type_ text_html_.pdf");
    expect(safeFilename("..\\..\\evil.html", "f")).toBe("_.._evil.html");
    expect(safeFilename("relevé €.pdf", "f")).toBe("relev_ _.pdf");
    expect(safeFilename("", "med_x")).toBe("med_x");
    expect(safeFilename("...", "med_x")).toBe("med_x");
    expect(safeFilename("x".repeat(10_000), "f").length).toBe(100);
  });

  it("downloads always name a file; media in place need not", () => {
    expect(contentDisposition({ contentType: OCTET_STREAM, inline: false }, null, "med_1")).toBe('attachment; filename="med_1"');
    expect(contentDisposition({ contentType: "image/png", inline: true }, null, "med_1")).toBe("inline");
    expect(contentDisposition({ contentType: "image/png", inline: true }, "a.png", "med_1")).toBe('inline; filename="a.png"');
  });

  it("every served file is nosniff and sandboxed", () => {
    const h = inertFileHeaders(servedType("text/html", bytes("<script>")), "x.html", "med_1");
    expect(h).toEqual({
      "Content-Type": OCTET_STREAM,
      "Content-Disposition": 'attachment; filename="x.html"',
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy": "sandbox; default-src 'none'",
    });
  });
});
