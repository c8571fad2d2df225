/**
 * One error class per HTTP meaning. Domain code throws these; the API turns them into
 * `{statusCode, error, message, code}`.
 */
export type ErrorBody = { statusCode: number; error: string; message: string; code: string };

export class WeirError extends Error {
  /** Headers the answer carries besides the body (`Retry-After`, `Connection`). */
  readonly headers: Readonly<Record<string, string>> = {};
  constructor(
    readonly statusCode: number,
    readonly error: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
  toBody(): ErrorBody {
    return { statusCode: this.statusCode, error: this.error, message: this.message, code: this.code };
  }
}

/** 400: the request is wrong; `field` names the offending field. */
export class ValidationError extends WeirError {
  override readonly name = 'ValidationError';
  constructor(
    readonly field: string | null,
    message: string,
    code = 'parameter_invalid',
  ) {
    super(400, 'Bad Request', code, field ? `${field}: ${message}` : message);
  }
}

/** 400: the operation is not allowed in the record's current state. */
export class InvalidStateError extends WeirError {
  override readonly name = 'InvalidStateError';
  constructor(message: string, code = 'status_transition_invalid') {
    super(400, 'Bad Request', code, message);
  }
}

export class UnauthorizedError extends WeirError {
  override readonly name = 'UnauthorizedError';
  constructor(message: string) {
    super(401, 'Unauthorized', 'authentication_required', message);
  }
}

export class ForbiddenError extends WeirError {
  override readonly name = 'ForbiddenError';
  constructor(message: string, code = 'forbidden') {
    super(403, 'Forbidden', code, message);
  }
}

export class NotFoundError extends WeirError {
  override readonly name = 'NotFoundError';
  /** `why`, when known, says why it is gone (`it was deleted`), so the id is not taken for mistyped. */
  constructor(what: string, id: string, why?: string) {
    super(404, 'Not Found', 'resource_missing', `${what} ${id} not found${why ? `: ${why}` : ''}`);
  }
}

/**
 * 409. With `retryAfterSeconds` the conflict is passing (a request still running), and `Retry-After`
 * says when to ask again. Without it, it is passing too when its code is `PASSING_CONFLICT_CODES`'
 * (a record busy or changing under the request); every other code names a lasting state of a record.
 */
export class ConflictError extends WeirError {
  override readonly name = 'ConflictError';
  override readonly headers: Readonly<Record<string, string>>;
  constructor(message: string, code = 'conflict', retryAfterSeconds?: number) {
    super(409, 'Conflict', code, message);
    this.headers = retryAfterSeconds === undefined ? {} : { 'Retry-After': String(retryAfterSeconds) };
  }
  /** Whether asking again soon may succeed: nothing the client sent or the record's settings refuse it. */
  get passing(): boolean {
    return 'Retry-After' in this.headers || PASSING_CONFLICT_CODES.has(this.code);
  }
}

/**
 * Conflict codes that pass: the plain `conflict` (a record busy, written by another request at the
 * same moment) and a chain reorganizing under the request. The others (`payment_link_used`,
 * `product_in_use`, `payment_pending`…) say what the record is and stay until someone changes it.
 */
export const PASSING_CONFLICT_CODES: ReadonlySet<string> = new Set(['conflict', 'chain_reorganizing']);

/**
 * 413: the body is over the limit of its route. The connection is closed after the answer: the
 * rest of the body is not read, so the socket cannot carry another request.
 */
export class ContentTooLargeError extends WeirError {
  override readonly name = 'ContentTooLargeError';
  override readonly headers = { Connection: 'close' };
  constructor(message: string) {
    super(413, 'Payload Too Large', 'request_too_large', message);
  }
}

/** 415: the body is in an encoding Weir does not read (`Content-Encoding: gzip`). */
export class UnsupportedMediaTypeError extends WeirError {
  override readonly name = 'UnsupportedMediaTypeError';
  constructor(message: string, code: string) {
    super(415, 'Unsupported Media Type', code, message);
  }
}

/** The HTTP edge's limits as refusals name them (`RateLimitedError.limit`); here, beside the error, so src/read-api/rate-limits.ts and the error both use it. */
export type RateLimitName = 'api_key' | 'hosted' | 'hosted_creates' | 'auth_failures';

/** 429: a rate limit is spent; `Retry-After` says in whole seconds when the next request is taken. */
export class RateLimitedError extends WeirError {
  override readonly name = 'RateLimitedError';
  override readonly headers: Readonly<Record<string, string>>;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    /** Which of the HTTP edge's limits was spent (`hosted_creates`…): a hosted page's words depend on it. */
    readonly limit: RateLimitName | null = null,
  ) {
    super(429, 'Too Many Requests', 'rate_limited', message);
    this.headers = { 'Retry-After': String(retryAfterSeconds) };
  }
}

/** 422: the request is well formed and names something real, but what it asks cannot be done with it. */
export class UnprocessableError extends WeirError {
  override readonly name = 'UnprocessableError';
  constructor(message: string, code: string) {
    super(422, 'Unprocessable Entity', code, message);
  }
}

/** 502: a service Weir depends on (a chain's RPC endpoints) did not give a usable answer; trying again later may work. */
export class UpstreamError extends WeirError {
  override readonly name = 'UpstreamError';
  constructor(message: string, code = 'upstream_unavailable') {
    super(502, 'Bad Gateway', code, message);
  }
}

/**
 * 503: what the request wrote is in the log, but the read models did not show it in time, so there
 * is nothing to answer with yet. Sending the same request again with the same Idempotency-Key is
 * safe (it creates nothing twice) and answers once they have caught up.
 */
export class ReadModelsBehindError extends WeirError {
  override readonly name = 'ReadModelsBehindError';
  constructor(message: string) {
    super(503, 'Service Unavailable', 'read_models_behind', message);
  }
}
