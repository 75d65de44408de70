import { iso } from "../../platform/time.ts";
import type { CompileAsset } from "./schemas.ts";
import type { AssetRow } from "./store.ts";

/** `idleMs`: how long an unused asset is kept (null: until deleted). */
export function toAssetView(row: AssetRow, idleMs: number | null): CompileAsset {
  return {
    sha256: row.sha256,
    sizeBytes: row.sizeBytes,
    createdAt: iso(row.createdAt),
    lastUsedAt: iso(row.lastUsedAt),
    expiresAt: idleMs === null ? null : iso(row.lastUsedAt + idleMs),
  };
}
