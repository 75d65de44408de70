/**
 * The one structured logger: a JSON line per call (`level`, `msg`, then the fields), so deployed
 * logs can be filtered by field. Never pass keys, secrets or request bodies as fields.
 */
export type LogLevel = "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;

export function logLine(level: LogLevel, msg: string, fields: LogFields = {}): string {
  return JSON.stringify({ level, msg, ...fields });
}

const write: Record<LogLevel, (line: string) => void> = {
  info: (line) => console.log(line),
  warn: (line) => console.warn(line),
  error: (line) => console.error(line),
};

export const log = {
  info: (msg: string, fields?: LogFields) => write.info(logLine("info", msg, fields)),
  warn: (msg: string, fields?: LogFields) => write.warn(logLine("warn", msg, fields)),
  error: (msg: string, fields?: LogFields) => write.error(logLine("error", msg, fields)),
};

/** An error as a log field: its message, never a stack unless asked for. */
export const errorText = (err: unknown): string => String(err);
