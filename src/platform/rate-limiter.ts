import { DurableObject } from "cloudflare:workers";
import { type LeaseRequest, type RateLimitDecision, SlidingWindow } from "./sliding-window.ts";

/**
 * One instance per API key (or per client IP for unauthenticated requests). Durable Objects run
 * one request at a time, so check-and-record is atomic without locks. The window lives in memory:
 * an instance is only evicted after it has been idle, by which time its window is empty.
 */
export class RateLimiter extends DurableObject<Env> {
  private window = new SlidingWindow();

  take(limit: number): RateLimitDecision {
    return this.window.take(limit, Date.now());
  }

  /**
   * Slots for an isolate to spend without asking again (rate-limit-permits.ts). Held slots count
   * from the end of their hold, so the window stays exact whenever they are used.
   */
  lease(req: LeaseRequest): RateLimitDecision {
    return this.window.lease(req, Date.now());
  }
}
