import { ApiError, errors } from "../platform/errors.ts";
import { type CompileContext, type CompiledPdf, type CompileInput, type Compiler, CONTROL_TIMEOUT_MS, isEventStream, type JobRef, jobControlPath, compilerBusy, compileRequestInit, compileTimeout, ENVIRONMENT_TIMEOUT_MS, environmentOf, synctexAnswer, synctexRequestInit, interpretServerAnswer, isServerAnswer, sleep, timeLimitOf, TRANSPORT_SLACK_MS } from "./compiler.ts";
import type { TexContainer } from "./container.ts";
import { log } from "../platform/log.ts";

/** Tries per request: each goes to a different instance. */
const MAX_TRIES = 3;
const BACKOFF_MS = [0, 250, 1000];

let cursor = -1;

class DeadlineExceeded extends Error {}

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The instance names to try, in order. Each isolate starts at a random instance and then goes
 * round-robin, so a burst from one isolate spreads over the pool and many isolates do not pile onto
 * the same container; a retry never returns to an instance already tried for this request.
 */
export function instanceOrder(poolSize: number, tries: number, random = Math.random, namespace?: string): string[] {
  if (cursor < 0) cursor = Math.floor(random() * poolSize);
  cursor = (cursor + 1) % poolSize;
  // an account's compiles go to one instance first, where its precompiled preambles are
  const first = namespace ? Number.parseInt(namespace.slice(0, 8), 16) % poolSize : cursor;
  const out: string[] = [];
  for (let i = 0; i < Math.min(tries, poolSize); i++) out.push(`tex-${(first + i) % poolSize}`);
  return out;
}

/**
 * The TEX_CONTAINER Cloudflare Container binding (production). Cold starts happen inside the
 * Container class's fetch (it starts the container and waits for the port); when that fails (no
 * instance available, start error, disconnect: plain-text 5xx/429 from the platform) or the
 * server there is busy (its JSON 503), the next instance is tried, a bounded number of times.
 * An instance that took the request but gave no answer by the deadline is not: that is the
 * document's time running out (422 compile_timeout), and another instance would only spend its
 * own time limit on the same document.
 */
export class ContainerCompiler implements Compiler {
  constructor(
    private readonly ns: DurableObjectNamespace<TexContainer>,
    private readonly poolSize: number,
    private readonly slackMs = TRANSPORT_SLACK_MS,
  ) {}

  /**
   * The instances a job of this namespace may be on: those its compile tries, in the same order.
   * Asked only if running (TexContainer answers a job path of a stopped container itself).
   */
  private jobInstances(job: JobRef): string[] {
    return instanceOrder(this.poolSize, MAX_TRIES, Math.random, job.namespace);
  }

  async cancel(job: JobRef): Promise<boolean> {
    const answers = await Promise.all(
      this.jobInstances(job).map(async (name) => {
        try {
          const res = await withDeadline(this.ns.getByName(name).fetch(`http://tex.container${jobControlPath(job)}`, { method: "DELETE" }), CONTROL_TIMEOUT_MS);
          await res.body?.cancel();
          return res.status === 200;
        } catch (err) {
          log.warn("container cancel failed", { instance: name, error: String(err) });
          return false;
        }
      }),
    );
    return answers.includes(true);
  }

  async events(job: JobRef, lastEventId: number): Promise<Response | null> {
    for (const name of this.jobInstances(job)) {
      try {
        const res = await withDeadline(this.ns.getByName(name).fetch(`http://tex.container${jobControlPath(job, true)}`, { headers: { "last-event-id": String(lastEventId) } }), CONTROL_TIMEOUT_MS);
        if (isEventStream(res)) return res;
        await res.body?.cancel();
      } catch (err) {
        log.warn("container events failed", { instance: name, error: String(err) });
      }
    }
    return null;
  }

  /** Any instance answers a SyncTeX query (it needs nothing of the compile but the file). */
  async synctex(gz: Uint8Array, query: string): Promise<string> {
    for (const name of instanceOrder(this.poolSize, MAX_TRIES)) {
      let res: Response;
      try {
        res = await withDeadline(this.ns.getByName(name).fetch(`http://tex.container/synctex?${query}`, synctexRequestInit(gz)), ENVIRONMENT_TIMEOUT_MS);
      } catch (err) {
        log.warn("container synctex failed", { instance: name, error: String(err) });
        continue;
      }
      if (isServerAnswer(res) && res.status !== 503) return synctexAnswer(res);
      await res.body?.cancel();
    }
    throw errors.unavailable("No compiler is available right now. Retry shortly.", 10);
  }

  /** Every instance runs the same image: the first that answers describes them all. */
  async environment(): Promise<string> {
    for (const name of instanceOrder(this.poolSize, MAX_TRIES)) {
      try {
        const res = await withDeadline(this.ns.getByName(name).fetch("http://tex.container/environment"), ENVIRONMENT_TIMEOUT_MS);
        if (res.status === 200) return await environmentOf(res);
        await res.body?.cancel();
      } catch (err) {
        log.warn("container environment failed", { instance: name, error: String(err) });
      }
    }
    throw errors.unavailable("No compiler is available right now. Retry shortly.", 10);
  }

  async compile(input: CompileInput, context: CompileContext = {}): Promise<CompiledPdf> {
    const deadline = timeLimitOf(input) + this.slackMs;
    const names = instanceOrder(this.poolSize, MAX_TRIES, Math.random, context.namespace);
    let busyFor = 0;
    for (const [i, name] of names.entries()) {
      if (BACKOFF_MS[i]) await sleep(BACKOFF_MS[i]!);
      let res: Response;
      try {
        // A deadline by race rather than an AbortSignal, which does not cross the Durable Object boundary.
        const stub = this.ns.getByName(name);
        res = await withDeadline(stub.fetch("http://tex.container/compile", compileRequestInit(input, context)), deadline);
      } catch (err) {
        if (err instanceof DeadlineExceeded) {
          log.warn("compile deadline passed; not retried", { instance: name, deadlineMs: deadline });
          throw compileTimeout(timeLimitOf(input));
        }
        log.warn("container fetch failed", { instance: name, error: String(err) });
        continue;
      }
      if (!isServerAnswer(res)) {
        log.warn("container unavailable", { instance: name, status: res.status, body: (await res.text()).slice(0, 200) });
        continue;
      }
      try {
        return await interpretServerAnswer(res, input);
      } catch (err) {
        if (err instanceof ApiError && err.code === "compiler_busy") {
          busyFor = Math.max(busyFor, Number(err.headers["Retry-After"] ?? 1));
          continue;
        }
        throw err;
      }
    }
    if (busyFor > 0) throw compilerBusy(busyFor);
    throw errors.unavailable("No compiler is available right now. Retry shortly.", 10);
  }
}
