import { log } from "./log.ts";

/**
 * Cron work item by item, in the order given: a failing item is logged and skipped, so one bad row
 * (of one account) never stops the items after it. Answers how many failed.
 */
export async function eachItem<T>(task: string, items: readonly T[], idOf: (item: T) => string, fn: (item: T) => Promise<unknown>): Promise<number> {
  let failed = 0;
  for (const item of items) {
    try {
      await fn(item);
    } catch (err) {
      failed++;
      log.error("cron item failed", { task, id: idOf(item), error: String(err) });
    }
  }
  return failed;
}
