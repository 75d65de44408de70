import { z } from "@hono/zod-openapi";
import { pageOf } from "../../platform/pagination.ts";
import { AssetHash } from "./hash.ts";

const iso = z.string().openapi({ format: "date-time" });

/** A malformed hash is a 400 naming `sha256`. */
export const AssetParam = z.object({ sha256: AssetHash.openapi({ param: { name: "sha256", in: "path" } }) });

export const CompileAsset = z
  .object({
    sha256: AssetHash,
    sizeBytes: z.number().int(),
    createdAt: iso,
    lastUsedAt: iso.openapi({ description: "The last upload or compile that used it." }),
    expiresAt: iso.nullable().openapi({ description: "When it is deleted unless used before (`lastUsedAt` plus `ASSET_IDLE_DAYS`); null: kept until deleted." }),
  })
  .openapi("CompileAsset");
export type CompileAsset = z.infer<typeof CompileAsset>;

export const AssetUsage = z
  .object({
    bytes: z.number().int().openapi({ description: "Bytes held (uploads under way included)." }),
    files: z.number().int(),
    quotaBytes: z.number().int().openapi({ description: "The plan's limit of bytes." }),
    quotaFiles: z.number().int().openapi({ description: "The plan's limit of assets." }),
  })
  .openapi("CompileAssetUsage");
export type AssetUsage = z.infer<typeof AssetUsage>;

export const CompileAssetPage = pageOf(CompileAsset, "CompileAssetPage")
  .extend({ usage: AssetUsage })
  .openapi("CompileAssetPage");
export type CompileAssetPage = z.infer<typeof CompileAssetPage>;
