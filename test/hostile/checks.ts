import type { RecordedEvent } from '../../src/event-store/event-store.ts';
import type { HostileRequest } from './generator.ts';
import type { RawResponse } from './raw-http.ts';

/** What every answer must be, whatever was asked. */
export const LIMIT_MS = 10_000;
const MAX_JSON_BODY = 1024 * 1024;
const MAX_FORM_BODY = 64 * 1024;

/** `signature` tells failures of one cause apart (event types written, the error's code); the report groups by it. */
export type Failure = { cause: string; detail: string; signature?: string };

/**
 * Events a request wrote: everything after `before` except the background's (`system:*` actors:
 * timers, webhook deliveries, workflows) and Idempotency-Key bookkeeping, which a refused request
 * with a key writes on purpose (the key is claimed, then released so a corrected request can use it).
 */
export const writtenByRequest = (events: RecordedEvent[]) =>
  events.filter((e) => !e.metadata.actor.startsWith('system:') && !e.streamId.startsWith('idempotency-'));

const errorCode = (text: string): string | undefined => {
  try {
    const parsed = JSON.parse(text) as { code?: unknown };
    return typeof parsed.code === 'string' ? parsed.code : undefined;
  } catch {
    return undefined;
  }
};

/** Weir's error body: exactly `{statusCode, error, message, code}`, the status repeated. */
function errorShapeProblem(status: number, text: string): string | null {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `a JSON content type with a body that is not JSON: ${text.slice(0, 100)}`;
  }
  const o = body as Record<string, unknown> | null;
  if (o === null || typeof o !== 'object' || Array.isArray(o)) return `not an object: ${text.slice(0, 100)}`;
  const keys = Object.keys(o).sort().join(',');
  if (keys !== 'code,error,message,statusCode') return `keys ${keys}`;
  if (o.statusCode !== status) return `statusCode ${String(o.statusCode)} in a ${status} answer`;
  if (typeof o.message !== 'string' || o.message === '') return 'no message';
  if (typeof o.code !== 'string' || !/^[a-z][a-z_]*$/.test(o.code)) return `code ${String(o.code)}`;
  return null;
}

/** The failures of one answer: judged on the answer itself and on what the request wrote to the log. */
export function judge(request: HostileRequest, response: RawResponse, written: RecordedEvent[]): Failure[] {
  if (response.kind === 'timeout') return [{ cause: `no answer within ${LIMIT_MS / 1000} s`, detail: '' }];
  if (response.kind === 'error') return [{ cause: 'connection failed without an answer', detail: response.error }];
  const failures: Failure[] = [];
  const { status, headers, text } = response;
  const code = errorCode(text);
  if (response.ms > LIMIT_MS)
    failures.push({ cause: `answered after ${LIMIT_MS / 1000} s`, detail: `${response.ms} ms` });
  if (status >= 500)
    failures.push({ cause: 'server error (5xx)', detail: text.slice(0, 300), signature: `${status} ${code ?? ''}` });
  if (status >= 400 && status < 500 && written.length > 0) {
    failures.push({
      cause: 'a refused request (4xx) wrote to the log',
      signature: [...new Set(written.map((e) => e.type))].sort().join(', '),
      detail: written
        .slice(0, 5)
        .map((e) => `${e.type} on ${e.streamId} by ${e.metadata.actor}`)
        .join('; '),
    });
  }
  // A payer who follows a real link has nothing to correct: a hosted page that refuses a GET leaves them stuck.
  const payerPage = ['checkout', 'invoices', 'pay'].includes(request.route.area);
  if (
    payerPage &&
    request.ownId &&
    (request.method === 'GET' || request.method === 'HEAD') &&
    (status === 400 || status === 422) &&
    // Node's own 400 for a request it cannot parse (no content type) is not the page's answer.
    headers['content-type'] !== undefined
  ) {
    failures.push({
      cause: 'a payer page refused a GET of a real record (it cannot be paid)',
      signature: `${status} ${code ?? ''}`,
      detail: text.slice(0, 300),
    });
  }
  if (status === 405 && !headers.allow) failures.push({ cause: '405 without an Allow header', detail: '' });
  const bodyBytes = request.body?.length ?? 0;
  if (code === 'request_too_large' && (status !== 413 || headers.connection !== 'close')) {
    failures.push({
      cause: 'an oversized body was not refused with 413 and Connection: close',
      detail: `${status}, Connection: ${String(headers.connection)}, body ${bodyBytes} bytes`,
    });
  }
  const form = /^application\/x-www-form-urlencoded/i.test(request.headers['content-type'] ?? '');
  if (
    (request.route.path === '/pay/:id' || request.route.path === '/checkout/:id') &&
    request.method === 'POST' &&
    form &&
    bodyBytes > MAX_FORM_BODY &&
    status === 400 &&
    // Node's own 400 for a request line it cannot parse (a path of backslashes) comes before the body is read.
    headers['content-type'] !== undefined
  ) {
    failures.push({
      cause: 'an oversized body was not refused with 413 and Connection: close',
      detail: `a ${bodyBytes}-byte payment link form answered 400`,
    });
  }
  const readsBody =
    ['POST', 'PUT', 'PATCH'].includes(request.method) &&
    request.route.area !== 'health' &&
    request.route.area !== 'metrics' &&
    request.route.area !== 'none';
  if (readsBody && bodyBytes > MAX_JSON_BODY && status >= 200 && status < 300)
    failures.push({ cause: 'a body over 1 MiB was accepted', detail: `${status}` });
  if (status >= 400 && request.method !== 'HEAD' && /json/i.test(String(headers['content-type'] ?? ''))) {
    const problem = errorShapeProblem(status, text);
    if (problem)
      failures.push({ cause: 'an error body not in the shape {statusCode, error, message, code}', detail: problem });
  }
  return failures;
}
