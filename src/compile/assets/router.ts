import { createRouter } from "../../platform/openapi.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** /v1/assets: files uploaded once and named by hash in compiles. */
export const assetRoutes = createRouter()
  .openapi(routes.putAssetRoute, async (c) => {
    const { sha256 } = c.req.valid("param");
    const r = await service.putAsset(c.env, c.get("auth"), sha256, new Uint8Array(await c.req.arrayBuffer()));
    return r.created ? c.json(r.asset, 201, { Location: routes.assetPath(sha256) }) : c.json(r.asset, 200);
  })
  .openapi(routes.getAssetRoute, async (c) => c.json(await service.getAsset(c.env, c.get("auth").accountId, c.req.valid("param").sha256), 200, { ETag: `"${c.req.valid("param").sha256}"` }))
  .openapi(routes.deleteAssetRoute, async (c) => {
    await service.deleteAsset(c.env, c.get("auth").accountId, c.req.valid("param").sha256);
    return c.body(null, 204);
  })
  .openapi(routes.listAssetsRoute, async (c) => c.json(await service.listAssetViews(c.env, c.get("auth"), c.req.valid("query")), 200));
