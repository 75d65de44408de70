import { createRouter } from "../../platform/openapi.ts";
import type { EventCatalogEntry } from "./catalog.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** /api/event-types: the catalog the entry points put together (src/app.ts). */
export function eventTypeRoutes(entries: readonly EventCatalogEntry[]) {
  const view = service.catalogView(entries);
  return createRouter().openapi(routes.listEventTypesRoute, (c) => c.json(view, 200));
}
