import type { IncomingMessage, RequestListener } from 'node:http';
import type Koa from 'koa';
import { ContentTooLargeError, UnsupportedMediaTypeError, ValidationError, type WeirError } from '../shared/errors.ts';

/** The refusals of a body that could not be read as the route reads it: another content type, bad JSON, one cut short. */
const UNREADABLE_BODY_CODES = new Set(['invalid_content_type', 'invalid_json', 'request_aborted']);

/**
 * Whether `error` refuses the request's body as unreadable (a compressed one, 415; one of another type,
 * malformed or cut short, 400) rather than anything in it: a hosted page says so in plain words.
 */
export const isUnreadableBody = (error: unknown): error is WeirError =>
  error instanceof UnsupportedMediaTypeError ||
  (error instanceof ValidationError && UNREADABLE_BODY_CODES.has(error.code));

/** The largest body `/api/v1` and `/admin` take. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** The largest body the public pages take (a payment link's form, a payer's choice of asset or code). */
export const MAX_PUBLIC_BODY_BYTES = 64 * 1024;

/** Requests that said `Expect: 100-continue` and have not been told to go on yet (see `continueWhenRead`). */
const awaitingContinue = new WeakSet<IncomingMessage>();

/**
 * The server's handler for `checkContinue`: the `100 Continue` is sent only when a route reads
 * the body, so a request refused before that (401, 413, 429) is answered without the client
 * sending a body that nobody will read.
 */
export function continueWhenRead(handler: RequestListener): RequestListener {
  return (req, res) => {
    awaitingContinue.add(req);
    handler(req, res);
  };
}

const tooLarge = (limit: number, what: string) => new ContentTooLargeError(`${what} must be at most ${limit} bytes`);

/** 413 at once, reading nothing, when the request's Content-Length already says more than `limit`. */
export function refuseDeclaredOversize(ctx: Koa.Context, limit: number, what = 'the request body'): void {
  const declared = ctx.get('content-length');
  if (declared !== '' && Number(declared) > limit) throw tooLarge(limit, what);
}

/** `refuseDeclaredOversize` as the first middleware of an area, before authentication reads anything else. */
export const bodyLimit =
  <S>(limit: number): Koa.Middleware<S> =>
  (ctx, next) => {
    refuseDeclaredOversize(ctx, limit);
    return next();
  };

/**
 * The whole body, at most `limit` bytes. Past the limit (a chunked body gives no length ahead)
 * it stops reading and throws a 413 whose answer closes the connection, since the rest of the
 * body is still on the socket. A compressed body is a 415; a client that goes away mid-body a 400.
 */
export function readRequestBody(ctx: Koa.Context, limit: number, what = 'the request body'): Promise<Buffer> {
  refuseDeclaredOversize(ctx, limit, what);
  const encoding = ctx.get('content-encoding').trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity')
    throw new UnsupportedMediaTypeError(
      `${what} must not be compressed (Content-Encoding: ${encoding}); send it uncompressed`,
      'unsupported_content_encoding',
    );
  const req = ctx.req;
  if (awaitingContinue.delete(req)) ctx.res.writeContinue();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onAborted);
      req.off('close', onAborted);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      stop();
      req.pause();
      reject(tooLarge(limit, what));
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onAborted = () => {
      stop();
      reject(
        new ValidationError(null, `${what} ended before it was complete: the client went away`, 'request_aborted'),
      );
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onAborted);
    req.on('close', onAborted);
  });
}
