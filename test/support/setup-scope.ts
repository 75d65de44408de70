/**
 * For vitest global setups that start several things: `start` registers a closer for each one as
 * soon as it runs. If `start` throws, everything started so far is closed (last first) before the
 * error goes on, so a failed setup never leaves a server behind that keeps the test run alive;
 * otherwise the returned teardown closes everything.
 */
export async function startAll(start: (onClose: (close: () => unknown) => void) => Promise<void>): Promise<() => Promise<void>> {
  const closers: Array<() => unknown> = [];
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) {
      await Promise.resolve()
        .then(close)
        .catch((e: unknown) => console.error("global setup: closing failed:", e));
    }
  };
  try {
    await start((close) => closers.push(close));
  } catch (e) {
    await closeAll();
    throw e;
  }
  return closeAll;
}
