import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import { scrubUrls, type Logger } from '../shared/logger.ts';
import { UnauthorizedError, ValidationError, WeirError } from '../shared/errors.ts';
import { COLLECTIONS, type ApiKeySecretDoc } from '../projections/collections.ts';
import type { ReadStore } from '../read-store/read-store.ts';
import { environmentOfKey, hashSecret } from '../tenancy/secrets.ts';
import type { ApiState, Tenant } from './api-context.ts';
import type { Environment } from '../event-store/event-store.ts';
import { MAX_BODY_BYTES, readRequestBody } from './request-body.ts';

const MAX_KNOWN_KEYS = 10_000;

/** A request id taken from the client: a short token of safe characters, never anything else. */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Longer paths are cut in the log line (a path is the client's to make up). */
const MAX_LOGGED_PATH = 512;

/**
 * One log line per request (method, path without its query string, which can hold tokens,
 * status, duration, request id), and the `X-Request-Id` answered: the client's when it is a sane
 * token, else a new one. Mounted first, so it sees the status the error middleware settled on.
 */
export function requestLogMiddleware(logger: Logger): Koa.Middleware<ApiState> {
  const http = logger.child({ component: 'http' });
  return async (ctx, next) => {
    const started = performance.now();
    const given = ctx.get('x-request-id');
    const requestId = SANE_REQUEST_ID.test(given) ? given : randomUUID();
    ctx.state.requestId = requestId;
    ctx.set('X-Request-Id', requestId);
    try {
      await next();
    } finally {
      const path = ctx.path.length > MAX_LOGGED_PATH ? `${ctx.path.slice(0, MAX_LOGGED_PATH)}…` : ctx.path;
      http.info(
        {
          event: 'http.request',
          requestId,
          method: ctx.method,
          path,
          status: ctx.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
        },
        `${ctx.method} ${path} ${ctx.status}`,
      );
    }
  };
}

/**
 * An error's name, message and stack, URLs cut (an RPC URL may hold a key): never its other
 * properties, which may carry a request's headers or body.
 */
const errorFields = (error: unknown) =>
  error instanceof Error
    ? { type: error.name, message: scrubUrls(error.message), stack: error.stack && scrubUrls(error.stack) }
    : { message: scrubUrls(String(error)) };

/** Logs an unexpected error of a request: the error middleware's, and the hosted pages' (hosted-error-pages.ts). */
export type UnexpectedErrorLog = (ctx: Koa.ParameterizedContext<ApiState>, error: unknown) => void;

/** Logs an unexpected error (with the request's id) to `logger`, or to stderr without one. */
export function unexpectedErrorLog(logger?: Logger): UnexpectedErrorLog {
  const http = logger?.child({ component: 'http' });
  return (ctx, error) => {
    if (http)
      http.error(
        {
          event: 'http.error',
          requestId: ctx.state.requestId,
          method: ctx.method,
          path: ctx.path.slice(0, MAX_LOGGED_PATH),
          err: errorFields(error),
        },
        `${ctx.method} ${ctx.path.slice(0, MAX_LOGGED_PATH)} failed`,
      );
    else console.error(`[api] ${ctx.method} ${ctx.path} failed:`, error);
  };
}

/** A client error that is not Weir's own (`error.status` 4xx, as koa's `ctx.throw` makes): a 400 of the API. */
export const clientHttpStatus = (error: unknown): number | null => {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' && status >= 400 && status < 500 ? status : null;
};

/**
 * Every error leaves as `{statusCode, error, message, code}`; unexpected ones as a bare 500,
 * logged (with the request's id) to `logger`.
 */
export function errorMiddleware(logger?: Logger): Koa.Middleware<ApiState> {
  const logUnexpected = unexpectedErrorLog(logger);
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        ctx.status = 404;
        ctx.body = {
          statusCode: 404,
          error: 'Not Found',
          message: `no route for ${ctx.method} ${ctx.path}`,
          code: 'resource_missing',
        };
      } else if (ctx.status >= 400 && (ctx.body === undefined || ctx.body === null)) {
        // Answers made without an error, such as the router's 405 for a method a path does not have.
        const status = ctx.status;
        const error = ctx.message || 'Error';
        const code = status === 405 ? 'method_not_allowed' : status >= 500 ? 'processing_error' : 'invalid_request';
        const allow = ctx.response.get('Allow');
        ctx.body = {
          statusCode: status,
          error,
          message: `${ctx.method} ${ctx.path}: ${error.toLowerCase()}${allow ? `; allowed: ${allow}` : ''}`,
          code,
        };
        ctx.status = status;
      }
    } catch (error) {
      if (error instanceof WeirError) {
        ctx.set(error.headers);
        ctx.status = error.statusCode;
        ctx.body = error.toBody();
        return;
      }
      const status = clientHttpStatus(error);
      if (status) {
        ctx.status = status;
        ctx.body = {
          statusCode: status,
          error: 'Bad Request',
          message: (error as Error).message,
          code: 'invalid_request',
        };
        return;
      }
      logUnexpected(ctx, error);
      ctx.status = 500;
      ctx.body = unexpectedErrorBody('an unexpected error occurred; it has been logged');
    }
  };
}

/** The JSON of an unexpected error (a 500), its `message` the words the reader is shown: never the error's own. */
export const unexpectedErrorBody = (message: string) => ({
  statusCode: 500,
  error: 'Internal Server Error',
  message,
  code: 'processing_error',
});

/** Reads the raw body (kept for idempotency), at most `limit` bytes, and parses JSON bodies. */
export function jsonBodyMiddleware(limit = MAX_BODY_BYTES): Koa.Middleware<ApiState> {
  return (ctx, next) => {
    ctx.state.rawBody = '';
    ctx.state.body = undefined;
    // Only these methods carry a body; the rest (GET above all) go straight on.
    if (ctx.method !== 'POST' && ctx.method !== 'PUT' && ctx.method !== 'PATCH') return next();
    return readJsonBody(ctx, next, limit);
  };
}

async function readJsonBody(ctx: Koa.ParameterizedContext<ApiState>, next: Koa.Next, limit: number): Promise<void> {
  const bytes = await readRequestBody(ctx, limit);
  if (bytes.length > 0 && ctx.is('multipart/form-data')) {
    // Kept as bytes for the route that takes a file; latin1 keeps the idempotency text lossless.
    ctx.state.multipart = bytes;
    ctx.state.rawBody = bytes.toString('latin1');
    return next();
  }
  const raw = bytes.toString('utf8');
  ctx.state.rawBody = raw;
  if (raw.trim().length > 0) {
    if (!ctx.is('application/json'))
      throw new ValidationError(
        null,
        'the request body must be JSON with Content-Type: application/json',
        'invalid_content_type',
      );
    try {
      ctx.state.body = JSON.parse(raw);
    } catch (error) {
      throw new ValidationError(
        null,
        `the request body is not valid JSON: ${(error as Error).message}`,
        'invalid_json',
      );
    }
  }
  await next();
}

/**
 * `Authorization: Bearer sk_<env>_…`. The key is looked up by its hash; a missing, malformed,
 * deleted or regenerated key is a 401. The key's environment scopes every query after this.
 */
export function apiKeyAuthentication(
  readStore: ReadStore,
  /** Brings the read models up to the log's head: a key just created by another process (`weir org create`) works at once. */
  catchUp: () => Promise<void> = async () => {},
): (ctx: Koa.Context) => Promise<Tenant> {
  const secrets = readStore.collection<ApiKeySecretDoc>(COLLECTIONS.apiKeySecrets);
  // What a well-formed header that named a valid key once says (its key's environment and hash),
  // so a busy client costs a Map lookup instead of a regex and a SHA-256. The key is still checked
  // against the read model on every request (deleted and regenerated keys stop at once).
  const knownHeaders = new Map<string, { environment: Environment; hash: string }>();
  const parse = (header: string): { environment: Environment; hash: string } => {
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match) throw new UnauthorizedError('malformed Authorization header; expected Bearer <secret key>');
    const key = match[1]!;
    const environment = environmentOfKey(key);
    if (!environment) throw new UnauthorizedError('malformed API key; Weir keys look like sk_test_… or sk_live_…');
    return { environment, hash: hashSecret(key) };
  };
  return async (ctx) => {
    const header = ctx.get('authorization');
    if (!header) throw new UnauthorizedError('missing Authorization header; send Authorization: Bearer <secret key>');
    const known = knownHeaders.get(header);
    const { environment, hash } = known ?? parse(header);
    let found = await secrets.get(hash);
    if (!found) {
      await catchUp();
      found = await secrets.get(hash);
    }
    if (!found || found.environment !== environment) {
      knownHeaders.delete(header);
      throw new UnauthorizedError('invalid API key: it does not exist, was regenerated or was deleted');
    }
    if (!known) {
      if (knownHeaders.size >= MAX_KNOWN_KEYS) knownHeaders.delete(knownHeaders.keys().next().value!);
      knownHeaders.set(header, { environment, hash });
    }
    return {
      organizationId: found.organizationId,
      environment,
      keyId: found.keyId,
      actor: `api_key:${found.keyId}`,
      scope: found.scope ?? 'full',
    };
  };
}

/** `apiKeyAuthentication` as a middleware: the request's tenant, then the rest. */
export function authMiddleware(readStore: ReadStore): Koa.Middleware<ApiState> {
  const authenticate = apiKeyAuthentication(readStore);
  return async (ctx, next) => {
    ctx.state.tenant = await authenticate(ctx);
    await next();
  };
}
