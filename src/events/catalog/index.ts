/** The event catalog: its route and the types products describe their events with. */
export { eventCatalog, envelopeOf, type EventCatalogEntry, type EventTypeDescriptions } from "./catalog.ts";
export { eventTypeRoutes } from "./router.ts";
