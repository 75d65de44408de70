import { describe, expect, it } from "vitest";
import { contactsFromCsv, MAX_ROWS, parseCsv } from "../../dashboard/src/csv.ts";

describe("console CSV import: parsing", () => {
  it("reads quoted fields with commas, doubled quotes and line breaks, and CRLF lines", () => {
    expect(parseCsv('a,"b, c","say ""hi""",\r\n"multi\nline",x\r\n\r\n', 10)).toEqual([
      ["a", "b, c", 'say "hi"', ""],
      ["multi\nline", "x"],
    ]);
  });

  it("maps columns by header name, splits tags on ';' and reports rows without a phone by line", () => {
    const { contacts, errors } = contactsFromCsv("Name,PHONE,tags\nAda,+15550100001,a; b\nNo phone,,x\n,+15550100002,\n");
    expect(contacts).toEqual([
      { line: 2, contact: { phone: "+15550100001", name: "Ada", tags: ["a", "b"] } },
      { line: 4, contact: { phone: "+15550100002" } },
    ]);
    expect(errors).toEqual([{ line: 3, message: "phone is empty" }]);
  });

  it("needs a phone column", () => {
    const r = contactsFromCsv("name,email\nAda,a@example.com\n");
    expect(r.contacts).toEqual([]);
    expect(r.errors[0]!.line).toBe(1);
  });

  it("stops reading after the row cap, however long the file (linear, bounded)", () => {
    const text = "phone\n" + "+15550100001\n".repeat(200_000);
    const started = performance.now();
    const { contacts, errors } = contactsFromCsv(text);
    expect(contacts).toHaveLength(MAX_ROWS);
    expect(errors).toEqual([{ line: MAX_ROWS + 2, message: `At most ${MAX_ROWS} rows per import; the rest was not read.` }]);
    expect(performance.now() - started).toBeLessThan(5_000); // does not hang
  });

  it("an unterminated quote swallows the rest as one field instead of failing", () => {
    expect(parseCsv('phone\n"+1555', 10)).toEqual([["phone"], ["+1555"]]);
  });
});
