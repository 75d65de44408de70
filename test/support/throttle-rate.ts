/**
 * The rate a receiver saw deliveries arrive at (tests and the webhooks benchmark). Written with
 * erasable TypeScript only, so Node runs it directly.
 */
export interface ObservedRate {
  /** Arrivals after the first per second between the first and the last: n slots spaced 1/rate apart give `rate`. */
  perSecond: number;
  /** Most arrivals within any 1 s window (a rate held on average can still burst). */
  maxInOneSecond: number;
  spanMs: number;
}

export function observedRate(arrivals: number[]): ObservedRate {
  const t = [...arrivals].sort((a, b) => a - b);
  const spanMs = t.length > 1 ? t[t.length - 1]! - t[0]! : 0;
  let maxInOneSecond = 0;
  for (let i = 0, j = 0; i < t.length; i++) {
    while (t[i]! - t[j]! >= 1000) j++;
    maxInOneSecond = Math.max(maxInOneSecond, i - j + 1);
  }
  return { perSecond: spanMs > 0 ? ((t.length - 1) * 1000) / spanMs : Infinity, maxInOneSecond, spanMs };
}
