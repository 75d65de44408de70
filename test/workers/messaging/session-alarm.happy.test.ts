import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sessionStub } from "../../../src/messaging/sessions/session-do.ts";
import { createKey } from "../helpers.ts";
import { sandboxSession } from "./support.ts";

/** The object's private alarm bookkeeping, reached as the runtime's tests reach it. */
interface AlarmInternals {
  alarmAt: number | null;
  ensureAlarm(due: number): Promise<void>;
}

describe("messaging: a session's alarm", () => {
  it("asked for twice at once, an earlier time then a later one, fires at the earlier", async () => {
    const k = await createKey("pro");
    const s = await sandboxSession(k.key);
    const got = await runInDurableObject(sessionStub(env, s.id), async (o, state) => {
      const internals = o as unknown as AlarmInternals;
      await state.storage.deleteAlarm();
      internals.alarmAt = null;
      // Far enough ahead that nothing fires while the test runs.
      const soon = Date.now() + 600_000;
      const later = soon + 600_000;
      // As a send due now and a group commit's backstop do: both under way before either has set it.
      await Promise.all([internals.ensureAlarm(soon), internals.ensureAlarm(later)]);
      const alarm = await state.storage.getAlarm();
      await state.storage.deleteAlarm();
      internals.alarmAt = null;
      return { alarm, soon };
    });
    expect(got.alarm).toBe(got.soon);
  });
});
