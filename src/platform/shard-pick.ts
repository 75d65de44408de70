// Pure, so the keys CLI (scripts/keys.ts) places accounts exactly as the Worker would.

/**
 * Where a new account goes: one of NEW_ACCOUNT_SHARDS, by a stable hash (FNV-1a) of its id, so the
 * same id always lands on the same shard and accounts spread evenly.
 */
export function pickShard(accountId: string, choices: readonly number[]): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < accountId.length; i++) {
    h ^= accountId.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return choices.length ? choices[h % choices.length]! : 0;
}
