import { Container } from "@cloudflare/containers";
import { log } from "../platform/log.ts";

/**
 * The TeX compile server (container/) as a Cloudflare Container. The Worker talks to a small pool
 * of named instances (`tex-0`…, COMPILER_INSTANCES; see compiler-container.ts), each its own
 * container. No internet: TeX needs none, and a document must not be able to reach out.
 */
export class TexContainer extends Container<Env> {
  override defaultPort = 8080;
  /** Warm engines are the point; an idle container sleeps after 10 minutes. */
  override sleepAfter = "10m";
  override enableInternet = false;
  override envVars = { PORT: "8080", HOST: "0.0.0.0" };

  /**
   * A job's control paths (cancel, events) go to the container only when it runs: a stopped one
   * has no job, and asking it must not start it.
   */
  override async fetch(request: Request): Promise<Response> {
    if (new URL(request.url).pathname.startsWith("/jobs/") && !this.ctx.container?.running) {
      return Response.json({ error: { code: "not_found", message: "This instance is not running." } }, { status: 404 });
    }
    return super.fetch(request);
  }

  override onError(error: unknown): never {
    log.error("tex container error", { error: String(error) });
    throw error;
  }
}
