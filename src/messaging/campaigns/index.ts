import { createRouter } from "../../platform/openapi.ts";

/** /api/campaigns routes (issue 7). */
export const campaignRoutes = createRouter();

/** Every minute: start scheduled campaigns that are due (issue 7). */
export async function onCronCampaigns(_env: Env, _now: number): Promise<void> {}
