import { z } from "@hono/zod-openapi";
import { compilerFor } from "./config.ts";

/** GET /v1/compile/environment: the compile server's description of its TeX installation (container/src/environment.ts). */
export const CompileEnvironment = z
  .object({
    texlive: z.object({
      version: z.string().nullable().openapi({ description: "TeX Live's release year.", example: "2024" }),
      banner: z.string().nullable().openapi({ description: "pdfTeX's `--version` line.", example: "pdfTeX 3.141592653-2.6-1.40.26 (TeX Live 2024/Debian)" }),
    }),
    engines: z.array(z.object({ name: z.string().openapi({ example: "xelatex" }), version: z.string().nullable().openapi({ example: "XeTeX 3.141592653-2.6-0.999996 (TeX Live 2024/Debian)" }) })),
    packages: z
      .array(
        z.object({
          name: z.string().openapi({ example: "geometry" }),
          kind: z.enum(["package", "class"]),
          date: z.string().optional().openapi({ description: "The date of its `\\ProvidesPackage`/`\\ProvidesClass` line.", example: "2020/01/02" }),
          version: z.string().optional().openapi({ example: "v5.9" }),
        }),
      )
      .openapi({ description: "Every `.sty` and `.cls` the installation has, by name, with the date and version it declares." }),
    fonts: z.array(z.string()).openapi({ description: "The font families fontconfig knows (what `fontspec` finds by name)." }),
    generatedMs: z.number().openapi({ description: "How long the compile server took to read its installation, once." }),
  })
  .openapi("CompileEnvironment");

/** Kept per isolate: every compile server of a deployment runs the same image. */
const KEEP_MS = 60 * 60 * 1000;
let kept: { text: string; until: number } | undefined;

/** The environment as JSON text, from the isolate's copy when it has a recent one. */
export async function compileEnvironment(env: Env, now = Date.now()): Promise<string> {
  if (kept && kept.until > now) return kept.text;
  const text = await compilerFor(env).environment();
  kept = { text, until: now + KEEP_MS };
  return text;
}

/** Tests: forget the isolate's copy. */
export function forgetEnvironment(): void {
  kept = undefined;
}
