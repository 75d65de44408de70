import { errors } from "../platform/errors.ts";
import { type CompileContext, type CompiledPdf, type CompileInput, type Compiler, compileRequestInit, interpretServerAnswer, isServerAnswer, sleep, TRANSPORT_SLACK_MS } from "./compiler.ts";
import { COMPILE_LIMITS } from "./limits.ts";

const BACKOFF_MS = [100, 400];

/**
 * The natively run compile server at a URL (`COMPILER_URL`): `npm run dev` and the tests. A refused
 * connection (server restarting) is retried briefly; anything else the server says is final.
 */
export class UrlCompiler implements Compiler {
  private readonly endpoint: string;

  constructor(baseUrl: string) {
    this.endpoint = `${baseUrl.replace(/\/+$/, "")}/compile`;
  }

  async compile(input: CompileInput, context: CompileContext = {}): Promise<CompiledPdf> {
    const deadline = (input.timeoutMs ?? COMPILE_LIMITS.defaultTimeoutMs) + TRANSPORT_SLACK_MS;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(this.endpoint, { ...compileRequestInit(input, context), signal: AbortSignal.timeout(deadline) });
      } catch (err) {
        const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
        if (!timedOut && attempt < BACKOFF_MS.length) {
          await sleep(BACKOFF_MS[attempt]!);
          continue;
        }
        console.error(JSON.stringify({ level: "error", msg: "compile server unreachable", error: String(err) }));
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
