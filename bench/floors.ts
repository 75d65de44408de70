// A benchmark's floors: each is printed with PASS or FAIL, and a failed one makes the process exit
// non-zero (through process.exitCode, so the benchmark still stops its servers on the way out).

/** Prints `label` with PASS or FAIL; a FAIL sets the exit code to 1 for good. */
export function floor(label: string, ok: boolean): boolean {
  console.log(`${label} ${ok ? "PASS" : "FAIL"}`);
  if (!ok) process.exitCode = 1;
  return ok;
}
