/** Messages on COMPILE_QUEUE: run a job, or deliver its callback. Ids only; the state is in D1. */
export type CompileQueueMessage = { kind: "compile"; jobId: string; accountId: string } | { kind: "callback"; jobId: string; accountId: string };

export function isCompileQueueMessage(body: unknown): body is CompileQueueMessage {
  const b = body as Partial<CompileQueueMessage> | null;
  return typeof b === "object" && b !== null && (b.kind === "compile" || b.kind === "callback") && typeof b.jobId === "string" && typeof b.accountId === "string";
}
