import { DurableObject } from "cloudflare:workers";
import { PortfolioWindow, portfolioName, type PortfolioAnswer, type WindowState } from "./portfolio.ts";

/**
 * One per account and business portfolio (`businessAccountId`): the messaging limit's shared window
 * (portfolio.ts). Only Session DOs call it; one object runs one call at a time, so two sessions
 * of the portfolio can never both take the last place in the tier.
 */
export class PortfolioDO extends DurableObject<Env> {
  private readonly window: PortfolioWindow;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.window = new PortfolioWindow(ctx.storage.sql);
  }

  async admit(recipients: string[], limit: number): Promise<PortfolioAnswer> {
    return this.window.admit(recipients, limit, Date.now());
  }

  async state(): Promise<WindowState> {
    return this.window.state(Date.now());
  }
}

/** The portfolio object of an account's `businessAccountId`: the one way to reach one. */
export function portfolioStub(env: Env, accountId: string, businessAccountId: string): DurableObjectStub<PortfolioDO> {
  return env.PORTFOLIOS.getByName(portfolioName(accountId, businessAccountId)) as unknown as DurableObjectStub<PortfolioDO>;
}
