/**
 * The one structured logger: a JSON line per call (`level`, `msg`, then the fields), so deployed
 * logs can be filtered by field. Never pass keys, secrets or request bodies as fields.
 */
export type LogLevel = "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export function logLine(level: LogLevel, msg: string, fields: LogFields = {}): string {
  return JSON.stringify({ level, msg, ...fields });
}

type Writer = Pick<Console, "log" | "warn" | "error">;
let out: Writer | null = null;
const sink = (): Writer => out ?? console;

/**
 * Sends every line to `writer` instead of the global console. The Workers tests route lines to the
 * runtime's own console: their runner replaces `console` with one that reports to the test process,
 * and a line logged by background work (a queue batch, an alarm) after a test file ended would
 * keep that file from finishing.
 */
export function routeLogs(writer: Writer | null): void {
  out = writer;
}

const write: Record<LogLevel, (line: string) => void> = {
  info: (line) => sink().log(line),
  warn: (line) => sink().warn(line),
  error: (line) => sink().error(line),
};

export const log = {
  info: (msg: string, fields?: LogFields) => write.info(logLine("info", msg, fields)),
  warn: (msg: string, fields?: LogFields) => write.warn(logLine("warn", msg, fields)),
  error: (msg: string, fields?: LogFields) => write.error(logLine("error", msg, fields)),
};

/** An error as a log field: its message, never a stack unless asked for. */
export const errorText = (err: unknown): string => String(err);
