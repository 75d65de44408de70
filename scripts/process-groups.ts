// Stopping what `npm run dev` started: every child runs in its own process group,
// which gets SIGTERM, and SIGKILL if anything in it is still alive after a grace
// period, so nothing (workerd, the compile server, TeX engines) outlives the runner.

/** Whether a process (a pid, or minus a process group id) still exists. */
export function exists(target: number): boolean {
  try {
    process.kill(target, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"; // exists, not ours to signal
  }
}

/** Sends `sig` to a process (or minus a process group id) that may already be gone. */
export function signal(target: number, sig: NodeJS.Signals): void {
  try {
    process.kill(target, sig);
  } catch {
    /* already gone */
  }
}

const groupAlive = (pgid: number) => exists(-pgid);
const signalGroup = (pgid: number, sig: NodeJS.Signals) => signal(-pgid, sig);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * SIGTERM to each process group, then SIGKILL to the groups with any process left
 * after `graceMs`. Resolves once every group is gone (or 1 s after the SIGKILL) with
 * the groups that had to be killed.
 */
export async function stopGroups(pgids: number[], graceMs: number): Promise<number[]> {
  for (const g of pgids) signalGroup(g, "SIGTERM");
  const until = Date.now() + graceMs;
  while (Date.now() < until && pgids.some(groupAlive)) await sleep(50);
  const stubborn = pgids.filter(groupAlive);
  for (const g of stubborn) signalGroup(g, "SIGKILL");
  for (const end = Date.now() + 1000; Date.now() < end && stubborn.some(groupAlive); ) await sleep(20);
  return stubborn;
}
