import { errors } from "../platform/errors.ts";
import { type CompileContext, type CompiledPdf, type CompileInput, type Compiler, CONTROL_TIMEOUT_MS, isEventStream, type JobRef, jobControlPath, compileRequestInit, ENVIRONMENT_TIMEOUT_MS, environmentOf, synctexAnswer, synctexRequestInit, compileTimeout, interpretServerAnswer, isServerAnswer, sleep, timeLimitOf, TRANSPORT_SLACK_MS } from "./compiler.ts";
import { log } from "../platform/log.ts";

const BACKOFF_MS = [100, 400];

/**
 * The natively run compile server at a URL (`COMPILER_URL`): `npm run dev` and the tests. A refused
 * connection (server restarting) is retried briefly; anything else the server says is final, and
 * no answer by the deadline is the document's 422 compile_timeout (never retried).
 */
export class UrlCompiler implements Compiler {
  private readonly endpoint: string;
  private readonly base: string;

  constructor(
    baseUrl: string,
    private readonly slackMs = TRANSPORT_SLACK_MS,
  ) {
    this.base = baseUrl.replace(/\/+$/, "");
    this.endpoint = `${this.base}/compile`;
  }

  async cancel(job: JobRef): Promise<boolean> {
    try {
      const res = await fetch(`${this.base}${jobControlPath(job)}`, { method: "DELETE", signal: AbortSignal.timeout(CONTROL_TIMEOUT_MS) });
      await res.body?.cancel();
      return res.status === 200;
    } catch (err) {
      log.warn("compile cancel not delivered", { jobId: job.jobId, error: String(err) });
      return false;
    }
  }

  async events(job: JobRef, lastEventId: number): Promise<Response | null> {
    // the time limit is for the answer's start: the stream itself lasts as long as the job
    const ac = new AbortController();
    const timer = setTimeout(() => ac.abort(), CONTROL_TIMEOUT_MS);
    let res: Response;
    try {
      res = await fetch(`${this.base}${jobControlPath(job, true)}`, { headers: { "last-event-id": String(lastEventId) }, signal: ac.signal });
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
    if (isEventStream(res)) return res;
    await res.body?.cancel();
    return null;
  }

  async synctex(gz: Uint8Array, query: string): Promise<string> {
    let res: Response;
    try {
      res = await fetch(`${this.base}/synctex?${query}`, { ...synctexRequestInit(gz), signal: AbortSignal.timeout(ENVIRONMENT_TIMEOUT_MS) });
    } catch (err) {
      log.error("compile server unreachable", { error: String(err) });
      throw errors.unavailable("The compiler is not reachable. Retry shortly.", 5);
    }
    return synctexAnswer(res);
  }

  async environment(): Promise<string> {
    let res: Response;
    try {
      res = await fetch(`${this.base}/environment`, { signal: AbortSignal.timeout(ENVIRONMENT_TIMEOUT_MS) });
    } catch (err) {
      log.error("compile server unreachable", { error: String(err) });
      throw errors.unavailable("The compiler is not reachable. Retry shortly.", 5);
    }
    return environmentOf(res);
  }

  async compile(input: CompileInput, context: CompileContext = {}): Promise<CompiledPdf> {
    const deadline = timeLimitOf(input) + this.slackMs;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(this.endpoint, { ...compileRequestInit(input, context), signal: AbortSignal.timeout(deadline) });
      } catch (err) {
        const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
        if (timedOut) throw compileTimeout(timeLimitOf(input));
        if (attempt < BACKOFF_MS.length) {
          await sleep(BACKOFF_MS[attempt]!);
          continue;
        }
        log.error("compile server unreachable", { error: String(err) });
        throw errors.unavailable("The compiler is not reachable. Retry shortly.", 5);
      }
      if (!isServerAnswer(res) && res.status >= 500 && attempt < BACKOFF_MS.length) {
        await res.body?.cancel();
        await sleep(BACKOFF_MS[attempt]!);
        continue;
      }
      return interpretServerAnswer(res, input);
    }
  }
}
