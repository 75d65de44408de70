import fc from "fast-check";

/** The part of JSON Schema (OpenAPI 3.1) that the document of this API uses. */
export interface Schema {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: Schema[];
  oneOf?: Schema[];
  allOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  example?: unknown;
  default?: unknown;
}

/** Values a field of a given name should sometimes take to get past validation (ids of real resources, reachable URLs). */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

/** Strings no validator should choke on. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "__proto__",
    "constructor",
    "prototype",
    "null",
    "undefined",
    "NaN",
    "-1",
    "1e309",
    "0x10",
    "../../etc/passwd",
    "%00",
    "\u0000",
    "\ud800",
    "\udfff\ud800",
    "\u202e\u200b\ufeff",
    "🧪👩‍👩‍👧‍👦",
    "ǅ𝔘𝔫𝔦𝔠𝔬𝔡𝔢",
    "{{",
    "{{name}",
    "{{ }}{{".repeat(100),
    "<script>alert(1)</script>",
    "' OR 1=1 --",
    "$(rm -rf /)",
    "\\input{/etc/passwd}",
    "a".repeat(65),
    "9".repeat(400),
  ),
  fc.string({ unit: "binary", maxLength: 64 }),
  fc.string({ unit: "grapheme", maxLength: 64 }),
  // Long, repetitive text: what makes a backtracking pattern blow up.
  fc.tuple(fc.constantFrom("{{", " ", "a", "{", "\\", "+1", "@c.us", "=", "%"), fc.integer({ min: 1_000, max: 20_000 })).map(([s, n]) => s.repeat(Math.ceil(n / s.length))),
);

/** A value of the wrong kind for anything. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, 1e308, -0, [], {}, [null], { "": "" }),
  fc.double(),
  fc.integer(),
  fc.array(fc.integer(), { maxLength: 3 }),
);

/** JSON text nested `depth` levels deep (arrays, objects or a mix). */
export function deepJson(depth: number, kind: "array" | "object"): string {
  return kind === "array" ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);
}

const POLLUTION_KEYS = ["__proto__", "constructor", "prototype", "__defineGetter__", "hasOwnProperty", "toString", "valueOf"];

export class SchemaArbitraries {
  constructor(
    private readonly components: Record<string, Schema>,
    private readonly hints: Hints,
    /** Fields that take hinted values only (e.g. URLs the service would call: only ones that answer). */
    private readonly onlyHinted = new Set<string>(),
  ) {}

  private resolve(s: Schema): Schema {
    let cur = s;
    for (let i = 0; cur.$ref && i < 20; i++) cur = this.components[cur.$ref.replace("#/components/schemas/", "")] ?? {};
    return cur;
  }

  /** Values that the schema allows (as far as a JSON Schema can say; refinements may still refuse some). */
  valid(schema: Schema, name = "", depth = 0): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const hint = this.hints[name];
    if (hint && this.onlyHinted.has(name)) return hint;
    const base = this.validOf(s, depth);
    return hint ? fc.oneof({ arbitrary: hint, weight: 3 }, { arbitrary: base, weight: 1 }) : base;
  }

  private validOf(s: Schema, depth: number): fc.Arbitrary<unknown> {
    if (s.const !== undefined) return fc.constant(s.const);
    if (s.enum) return fc.constantFrom(...s.enum);
    const alts = s.anyOf ?? s.oneOf;
    if (alts) return fc.oneof(...alts.map((a) => this.valid(a, "", depth + 1)));
    if (s.allOf?.length) return this.valid(s.allOf[0]!, "", depth + 1);
    const type = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
    if (type.length > 1) return fc.oneof(...type.map((t) => this.validOf({ ...s, type: t }, depth)));
    switch (type[0]) {
      case "null":
        return fc.constant(null);
      case "boolean":
        return fc.boolean();
      case "integer":
      case "number": {
        const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : -1_000_000);
        const max = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : 1_000_000);
        const ints = fc.integer({ min: Math.ceil(Math.max(min, -(2 ** 31))), max: Math.floor(Math.min(max, 2 ** 31)) });
        return fc.oneof(ints, fc.constantFrom(min, max).filter((v) => Number.isFinite(v)));
      }
      case "string":
        return this.validString(s);
      case "array": {
        const items = s.items ? this.valid(s.items, "", depth + 1) : fc.jsonValue();
        const minLength = s.minItems ?? 0;
        return fc.array(items, { minLength, maxLength: Math.max(minLength, Math.min(s.maxItems ?? 3, 3)) });
      }
      case "object":
      default: {
        if (!s.properties) return depth > 3 ? fc.constant({}) : fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 16 }), fc.integer()), { maxKeys: 3 });
        const record: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [key, prop] of Object.entries(s.properties)) record[key] = this.valid(prop, key, depth + 1);
        return fc.record(record, { requiredKeys: (s.required ?? []).filter((k) => k in record) });
      }
    }
  }

  private validString(s: Schema): fc.Arbitrary<string> {
    const minLength = s.minLength ?? 0;
    const maxLength = Math.min(s.maxLength ?? 64, 256);
    const fit = (v: string) => (v.length < minLength ? v.padEnd(minLength, "a") : v.slice(0, Math.max(minLength, Math.min(v.length, s.maxLength ?? v.length))));
    const options: fc.Arbitrary<string>[] = [fc.string({ minLength, maxLength: Math.max(minLength, maxLength) })];
    if (s.format === "date-time") options.push(fc.date({ min: new Date("2020-01-01"), max: new Date("2035-01-01"), noInvalidDate: true }).map((d) => d.toISOString()));
    if (s.format === "uri") options.push(fc.webUrl({ validSchemes: ["https"] }));
    if (s.pattern) {
      try {
        options.push(fc.stringMatching(new RegExp(s.pattern)).map(fit));
      } catch {
        // A pattern fast-check cannot generate from: plain strings only.
      }
    }
    if (typeof s.example === "string") options.push(fc.constant(s.example));
    if (s.maxLength !== undefined && s.maxLength <= 100_000) options.push(fc.constant("x".repeat(s.maxLength)), fc.constant("x".repeat(s.maxLength + 1)));
    return fc.oneof(...options);
  }

  /**
   * A valid value with one part made hostile: a field of the wrong type, a hostile string, an
   * unknown or prototype-polluting key, or an oversized array.
   */
  hostile(schema: Schema, name = "", depth = 0): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const type = Array.isArray(s.type) ? s.type[0] : s.type;
    const leaf = fc.oneof(wrongType, hostileString);
    if (depth > 4) return leaf;
    if (s.properties) {
      const keys = Object.keys(s.properties);
      return fc
        .tuple(
          this.valid(s, name, depth) as fc.Arbitrary<Record<string, unknown>>,
          fc.constantFrom(...keys, ...POLLUTION_KEYS),
          fc.constantFrom(...keys).chain((k) => this.hostile(s.properties![k]!, k, depth + 1).map((v) => [k, v] as const)),
          fc.integer({ min: 0, max: 2 }),
        )
        .map(([value, pollute, [key, bad], mode]) => {
          const out: Record<string, unknown> = { ...value };
          if (mode === 0) out[key] = bad;
          else if (mode === 1) Object.defineProperty(out, pollute, { value: { polluted: true, isAdmin: true, [key]: bad }, enumerable: true, writable: true, configurable: true });
          else out[key] = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}') as unknown;
          return out;
        });
    }
    if (type === "array" && s.items) {
      const over = (s.maxItems ?? 50) + 1;
      return fc.oneof(
        fc.array(this.hostile(s.items, "", depth + 1), { minLength: 1, maxLength: 3 }),
        over <= 5_001 ? (this.valid(s.items, "", depth + 1).map((v) => Array.from({ length: over }, () => v)) as fc.Arbitrary<unknown>) : leaf,
        leaf,
      );
    }
    return leaf;
  }
}

/** A body as sent over the wire: JSON of a value, or text that is not (quite) JSON. */
export const malformedBody: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("", "{", "}", "[", "nul", '{"a":', '{"a":1,}', "'{}'", "\u0000", "\ufeff{}", "{}{}", '{"__proto__":{"polluted":true}}', '{"constructor":{"prototype":{"polluted":true}}}'),
  fc.integer({ min: 1_000, max: 100_000 }).chain((d) => fc.constantFrom(deepJson(d, "array"), deepJson(d, "object"))),
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.integer({ min: 1, max: 20 }).map((n) => `{"s":"${"\\u0000".repeat(n * 1000)}"}`),
);
