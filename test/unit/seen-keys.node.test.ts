// The Session DO's record of network notices already acted on (replayed calls), over node:sqlite.
import { describe, expect, it } from "vitest";
import { DatabaseSync } from "node:sqlite";
import { memorySql } from "./memory-sql.ts";
import { KEEP_MS, MAX_KEYS, SeenKeys } from "../../src/messaging/sessions/seen-keys.ts";

describe("seen keys", () => {
  it("a key is claimed once; a released claim (nothing recorded) can be claimed again", () => {
    const s = new SeenKeys(memorySql());
    expect(s.claim("call:connect:wacid.1", 1_000)).toBe(true);
    expect(s.claim("call:connect:wacid.1", 2_000)).toBe(false);
    expect(s.claim("call:terminate:wacid.1", 2_000)).toBe(true);
    s.release("call:connect:wacid.1");
    expect(s.claim("call:connect:wacid.1", 3_000)).toBe(true);
  });

  it("keys are kept a week, and survive a restart over the same storage", () => {
    const db = new DatabaseSync(":memory:");
    expect(new SeenKeys(memorySql(db)).claim("k", 0)).toBe(true);
    const again = new SeenKeys(memorySql(db));
    expect(again.claim("k", KEEP_MS - 1)).toBe(false);
    expect(again.claim("other", KEEP_MS)).toBe(true);
    expect(again.claim("k", KEEP_MS + 1)).toBe(true);
  });

  it("at most MAX_KEYS are kept: the oldest claims go first", () => {
    const db = new DatabaseSync(":memory:");
    const s = new SeenKeys(memorySql(db));
    for (let i = 0; i < MAX_KEYS + 25; i++) s.claim(`k${i}`, 1_000 + i);
    expect((db.prepare("SELECT count(*) AS n FROM seen_keys").get() as { n: number }).n).toBe(MAX_KEYS);
    expect(s.claim("k0", 50_000)).toBe(true);
    expect(s.claim(`k${MAX_KEYS + 24}`, 50_000)).toBe(false);
  });
});
