import type { Context } from "hono";
import { createRouter } from "../../platform/openapi.ts";
import type { AppEnv } from "../../platform/types.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** An upload's answer: 201 with its URL when stored now, 200 when the account already had it. */
const stored = (c: Context<AppEnv>, r: Awaited<ReturnType<typeof service.putAsset>>) =>
  r.created ? c.json(r.asset, 201, { Location: routes.assetPath(r.asset.sha256) }) : c.json(r.asset, 200);

/** /v1/assets: files uploaded once and named by hash in compiles. */
export const assetRoutes = createRouter()
  .openapi(routes.putAssetRoute, async (c) => stored(c, await service.putAsset(c.env, c.get("auth"), c.req.valid("param").sha256, new Uint8Array(await c.req.arrayBuffer()))))
  .openapi(routes.getAssetRoute, async (c) => c.json(await service.getAsset(c.env, c.get("auth").accountId, c.req.valid("param").sha256), 200, { ETag: `"${c.req.valid("param").sha256}"` }))
  .openapi(routes.deleteAssetRoute, async (c) => c.body(await service.deleteAsset(c.env, c.get("auth").accountId, c.req.valid("param").sha256), 204))
  .openapi(routes.listAssetsRoute, async (c) => c.json(await service.listAssetViews(c.env, c.get("auth"), c.req.valid("query")), 200));
