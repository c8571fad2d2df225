import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Structured fields of one line; `level` picks the line's level (default: from its wording). */
export type LogFields = { level?: 'debug' | 'info' | 'warn' | 'error'; [field: string]: unknown };

/**
 * What modules log through: a message and, where they have them, structured fields. Modules that
 * only pass a line still work (`(line) => …`), so tests can keep giving `() => {}`.
 */
export type Log = (message: string, fields?: LogFields) => void;

/**
 * A backstop only: values like these are never passed to the logger in the first place. Any field
 * of these names, at the top or one level down, is written as "[redacted]".
 */
const SECRET_FIELDS = [
  'authorization',
  'cookie',
  'apiKey',
  'secretKey',
  'secret',
  'webhookSecret',
  'masterKey',
  'auditKey',
  'adminToken',
  'sweeperKey',
  'privateKey',
  'password',
  'email',
  'phone',
  'customerName',
  'customerDetails',
  'billingDetails',
  'shippingDetails',
  'query',
  'querystring',
];
const SECRET_NAMES: ReadonlySet<string> = new Set(SECRET_FIELDS);
const CENSOR = '[redacted]';

/** A copy of `value` (its prototype and own properties, so an Error stays one) with `keys` censored. */
function censored<T extends object>(value: T, keys: string[]): T {
  const copy = Object.create(Object.getPrototypeOf(value)) as T;
  Object.defineProperties(copy, Object.getOwnPropertyDescriptors(value));
  for (const key of keys) (copy as Record<string, unknown>)[key] = CENSOR;
  return copy;
}

/** The secret fields of one nested object (`inside` names it): its `SECRET_FIELDS`, and a header's API key. */
function secretKeysOf(value: object, inside: string): string[] {
  const found: string[] = [];
  for (const key of Object.keys(value))
    if (SECRET_NAMES.has(key) || (inside === 'headers' && key === 'x-api-key')) found.push(key);
  return found;
}

/**
 * The line's fields with every `SECRET_FIELDS` field, at the top or one level down, plus
 * `headers["x-api-key"]` and `req.headers.authorization`, written as "[redacted]". Copied only where
 * one is found. pino's `redact` with `*.field` paths ran every field of every line through a
 * redactor that parsed each of its 40 paths again: the better part of the cost of a line, and an
 * API write logs one per event and one per request.
 */
export function redactSecrets<T extends Record<string, unknown>>(fields: T): T {
  let out: Record<string, unknown> = fields;
  const set = (key: string, value: unknown) => {
    if (out === fields) out = { ...fields };
    out[key] = value;
  };
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    if (SECRET_NAMES.has(key)) {
      set(key, CENSOR);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    const keys = secretKeysOf(value, key);
    const headers = key === 'req' ? (value as { headers?: unknown }).headers : undefined;
    const requestAuthorization = headers !== null && typeof headers === 'object' && 'authorization' in headers;
    if (keys.length === 0 && !requestAuthorization) continue;
    const inner = censored(value, keys) as Record<string, unknown>;
    if (requestAuthorization) inner.headers = censored(headers, ['authorization']);
    set(key, inner);
  }
  return out as T;
}

const baseOptions = (level: LogLevel): LoggerOptions => ({
  level,
  base: { pid: process.pid },
  timestamp: pino.stdTimeFunctions.isoTime,
  // Top-level fields through pino's redaction as well: it also covers a child logger's bindings,
  // which formatters.log never sees, and costs nothing on a line without such a field.
  redact: { paths: SECRET_FIELDS, censor: CENSOR },
  formatters: { log: redactSecrets },
});

/**
 * Weir's logger: JSON lines on stdout (or `destination`), or human-readable ones with `pretty`.
 * Writes are synchronous so the last lines before an exit are not lost.
 */
export function createLogger(
  options: { level?: LogLevel; pretty?: boolean; destination?: DestinationStream } = {},
): Logger {
  const level = options.level ?? 'info';
  if (options.pretty)
    return pino(
      baseOptions(level),
      pretty({
        sync: true,
        colorize: !options.destination && process.stdout.isTTY === true,
        translateTime: 'SYS:HH:MM:ss.l',
        // One line per entry, `[component] message {fields}`, like the JSON lines say it.
        singleLine: true,
        messageFormat: '{if component}[{component}] {end}{msg}',
        ignore: 'pid,hostname,component',
        destination: options.destination ?? 1,
      }),
    );
  return pino(baseOptions(level), options.destination ?? pino.destination({ dest: 1, sync: true }));
}

/** A logger whose every line (a JSON string, without its newline) goes to `write`: tests capture or drop them. */
export function createLineLogger(write: (line: string) => void, level: LogLevel = 'info'): Logger {
  return pino(baseOptions(level), {
    write(chunk: string) {
      write(chunk.endsWith('\n') ? chunk.slice(0, -1) : chunk);
    },
  });
}

/** A logger that writes nothing (tests, benchmarks). */
export const silentLogger = (): Logger => pino({ level: 'silent' });

// Lines that say something went wrong are warnings; the rest are information.
const WARNING =
  /\b(fail(s|ed|ing)?|cannot|could not|refused|errors?|not answer|unavailable|dropped|malformed|time(d)? ?out|instead of|retrying|not mined|reorg)\b/i;

/** URLs are cut to scheme and host: an RPC URL's path or query often holds its provider's key, and userinfo a password. */
export const scrubUrls = (text: string): string =>
  text.replace(
    /\b([a-z][a-z0-9+.-]{1,15}:\/\/)(?:[^@\s/]*@)?([^/\s?#'")]+)([^\s'")]*)/gi,
    (_match, scheme: string, host: string, rest: string) => `${scheme}${host}${rest ? '/…' : ''}`,
  );

/** Email addresses in a line become `[email]`: a mail server's refusal names the customer's address. */
export const scrubEmails = (text: string): string =>
  text.replace(/[^\s<>"'(),;:]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g, '[email]');

/**
 * `Log` onto a pino logger. A leading `[component]` of a line (the modules' own prefix, e.g.
 * `[timers]`) becomes the `component` field; URLs and email addresses in the text are scrubbed.
 */
export function logTo(logger: Logger): Log {
  const children = new Map<string, Logger>();
  const childFor = (component: string): Logger => {
    let child = children.get(component);
    if (!child) {
      child = logger.child({ component });
      children.set(component, child);
    }
    return child;
  };
  return (message, fields) => {
    const match = /^\[([\w .:-]{1,40})\] /.exec(message);
    const target = match ? childFor(match[1]!) : logger;
    const text = scrubEmails(scrubUrls(match ? message.slice(match[0].length) : message));
    const { level, ...rest } = fields ?? {};
    target[level ?? (WARNING.test(text) ? 'warn' : 'info')](rest, text);
  };
}
