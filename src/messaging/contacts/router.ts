import { createRouter } from "../../platform/openapi.ts";
import * as routes from "./routes.ts";
import * as service from "./service.ts";

/** /api/contacts: the address book (import, CRUD, opt-out). */
export const contactRoutes = createRouter()
  .openapi(routes.importContactsRoute, async (c) => c.json(await service.importContacts(c.env, c.get("auth").accountId, c.req.valid("json").contacts), 200))
  .openapi(routes.createContactRoute, async (c) => c.json(await service.createContact(c.env, c.get("auth").accountId, c.req.valid("json")), 201))
  .openapi(routes.listContactsRoute, async (c) => c.json(await service.listContacts(c.env, c.get("auth").accountId, c.req.valid("query")), 200))
  .openapi(routes.getContactRoute, async (c) => c.json(await service.getContact(c.env, c.get("auth").accountId, c.req.valid("param").id), 200))
  .openapi(routes.updateContactRoute, async (c) => c.json(await service.updateContact(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 200))
  .openapi(routes.deleteContactRoute, async (c) => c.json(await service.deleteContact(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
