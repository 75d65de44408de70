import type { Router } from "../../platform/openapi.ts";
import { createContactRoute, deleteContactRoute, getContactRoute, importContactsRoute, listContactsRoute, updateContactRoute } from "./routes.ts";
import { createContact, deleteContact, getContact, importContacts, listContacts, updateContact } from "./service.ts";

export function mountContacts(app: Router): void {
  app.openapi(importContactsRoute, async (c) => c.json(await importContacts(c.env, c.get("auth").accountId, c.req.valid("json").contacts), 200));
  app.openapi(createContactRoute, async (c) => c.json(await createContact(c.env, c.get("auth").accountId, c.req.valid("json")), 201));
  app.openapi(listContactsRoute, async (c) => c.json(await listContacts(c.env, c.get("auth").accountId, c.req.valid("query")), 200));
  app.openapi(getContactRoute, async (c) => c.json(await getContact(c.env, c.get("auth").accountId, c.req.valid("param").id), 200));
  app.openapi(updateContactRoute, async (c) =>
    c.json(await updateContact(c.env, c.get("auth").accountId, c.req.valid("param").id, c.req.valid("json")), 200),
  );
  app.openapi(deleteContactRoute, async (c) => {
    const { id } = c.req.valid("param");
    await deleteContact(c.env, c.get("auth").accountId, id);
    return c.json({ id, deleted: true as const }, 200);
  });
}
