import { DurableObject } from "cloudflare:workers";

/** One per messaging session: the "phone" (issue 5). */
export class SessionDO extends DurableObject<Env> {}
