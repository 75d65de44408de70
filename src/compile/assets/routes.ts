import { AUTHED_ERRORS, jsonResponse, routeGroup } from "../../platform/openapi.ts";
import { PaginationQuery } from "../../platform/pagination.ts";
import { COMPILE_LIMITS as L } from "../limits.ts";
import { AssetParam, CompileAsset, CompileAssetPage } from "./schemas.ts";

const route = routeGroup({ tags: ["Compile assets"], errors: AUTHED_ERRORS });
/** The raw bytes of the file; a plain (non-zod) schema, so that no validator reads the body. */
const bytes = { schema: { type: "string" as const, format: "binary" } };

export const putAssetRoute = route("put", "/v1/assets/{sha256}", "Upload a file once, named by its SHA-256", {
  description:
    `The body is the file's bytes (any \`Content-Type\`), at most ${L.maxAssetBytes / 1024 / 1024} MiB. They must hash to \`sha256\` (else 422 \`hash_mismatch\`). ` +
    'A compile then names it in `files` as `{"path": "fonts/My.otf", "asset": "<sha256>"}` instead of sending its content. ' +
    "201 when stored, 200 when the account already had it (it counts as used). A new asset must fit the plan's quota of bytes and assets (409 `asset_quota_exceeded` with the usage). " +
    "Assets are the account's own: another account's upload of the same bytes is neither seen nor shared. One unused for `ASSET_IDLE_DAYS` (default 30) is deleted.",
  request: { params: AssetParam, body: { required: true, content: { "application/octet-stream": bytes } } },
  responses: {
    200: jsonResponse(CompileAsset, "The account already had it"),
    201: { ...jsonResponse(CompileAsset, "Stored"), headers: { Location: { schema: { type: "string" as const }, description: "The asset's URL." } } },
  },
  errors: [409, 413, 422, 503],
});

export const getAssetRoute = route("get", "/v1/assets/{sha256}", "An asset's metadata (HEAD: does it exist?)", {
  description: "The size and when it was uploaded and last used. `HEAD` answers the same status without a body: 200 when the account has the asset, 404 when not.",
  request: { params: AssetParam },
  responses: { 200: jsonResponse(CompileAsset, "The asset") },
  errors: [404],
});

export const deleteAssetRoute = route("delete", "/v1/assets/{sha256}", "Delete an asset", {
  description: "Its bytes go at once; compiles that name it afterwards are 422 `unknown_assets`.",
  request: { params: AssetParam },
  responses: { 204: { description: "Deleted" } },
  errors: [404],
});

export const listAssetsRoute = route("get", "/v1/assets", "List the account's assets, newest first, with its usage", {
  request: { query: PaginationQuery },
  responses: { 200: jsonResponse(CompileAssetPage, "A page of assets and what the account holds against its quota") },
});

export const assetPath = (sha256: string) => `/v1/assets/${sha256}`;
