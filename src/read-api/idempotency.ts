import { createHash } from 'node:crypto';
import type Router from '@koa/router';
import type Koa from 'koa';
import { WrongExpectedRevisionError, type EventStore, type NewEvent } from '../event-store/event-store.ts';
import type { Clock } from '../shared/clock.ts';
import type { SecretBox } from '../tenancy/secrets.ts';
import { ConflictError } from '../shared/errors.ts';
import { newId, seededIds } from '../shared/ids.ts';
import type { JsonObject } from '../shared/json.ts';
import type { ApiState } from './api-context.ts';
import { canonicalJson } from './canonical-json.ts';
import { idempotencyKeyOf } from './idempotency-key.ts';
import { declaredPost } from './schema/route.ts';

/** A claim whose request never recorded a response (the process died) may be retried after this. */
const ABANDONED_AFTER_MS = 60_000;
/** What a request meeting its key's first request still running is told to wait: most requests take well under this. */
const IN_PROGRESS_RETRY_AFTER_SECONDS = 1;

/**
 * `bodyHash` is the hash of the body's canonical JSON (`canonicalJson`: the same document with other
 * whitespace or key order is the same request), or of its bytes when it has none. Claims written
 * before that (no `bodyForm`) hashed the bytes, and are compared so.
 */
type Claimed = { method: string; path: string; bodyHash: string; bodyForm?: 'canonical-json'; at: string };
/**
 * The recorded response. Its body is sealed with the master key: a response can hold a secret
 * shown only once (a new API key, a webhook signing secret), and the log must never hold one in
 * plain text. Records written before sealing carry a plain `body`.
 */
type Recorded = { status: number; sealedBody?: string; body?: string };

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The key's first request was another one: the 409 names what differs, so the client sees its bug. */
function mismatch(key: string, first: Claimed, now: Claimed): ConflictError {
  const what =
    first.method !== now.method || first.path !== now.path
      ? `for ${first.method} ${first.path}, not ${now.method} ${now.path}`
      : `with a different request body on ${now.method} ${now.path}`;
  return new ConflictError(
    `Idempotency-Key ${key} was already used ${what}: a key is bound to its first request's method, path and body; send this request with a new key`,
    'idempotency_key_in_use',
  );
}

/**
 * Whether a POST to a path goes to a route declared `idempotent: false` or `readsOnly`: the
 * middleware lets it through without reading its Idempotency-Key, as the document says it takes none.
 */
export const keylessPost = (routers: readonly Router<ApiState>[]): ((path: string) => boolean) =>
  declaredPost(routers, (route) => route.idempotent === false || route.readsOnly === true);

/**
 * `Idempotency-Key` on POST: the first request's response is recorded in the log, so a retry with
 * the same key and body gets it again (even after a restart), and the same key on another path or
 * with another body is a 409 `idempotency_key_in_use`; while the first request runs, a retry is a 409
 * `idempotency_request_in_progress` with `Retry-After`. Bodies are compared by meaning: the same
 * JSON with other whitespace or key order is the same body; another value, an added key or another array order is another. A request that failed (an error, or a 4xx or 5xx answer) releases its key, so the corrected request
 * may reuse it. The records a request creates get ids seeded by its key and body (`seededIds`), so
 * running the same request again after a failure that came after its writes (the read models did
 * not catch up in time, a store failed) creates nothing twice and answers with what it created.
 * Keys are kept in the log, so they outlive the required 24 hours.
 */
export function idempotencyMiddleware(deps: {
  eventStore: EventStore;
  clock: Clock;
  secretBox: SecretBox;
  /** POST paths that only read (an analytics query): a key sent there is ignored, unchecked. */
  keyless?: (path: string) => boolean;
}): Koa.Middleware<ApiState> {
  const { eventStore, clock, secretBox, keyless = () => false } = deps;
  // Only a POST with a key is looked at; every other request goes straight on.
  return (ctx, next) => {
    const key = ctx.method === 'POST' && !keyless(ctx.path) ? idempotencyKeyOf(ctx.req.rawHeaders) : null;
    return key === null ? next() : idempotent(ctx, next, key);
  };

  async function idempotent(ctx: Koa.ParameterizedContext<ApiState>, next: Koa.Next, key: string): Promise<void> {
    const { tenant, rawBody } = ctx.state;
    const streamId = `idempotency-${sha256(`${tenant.organizationId}:${tenant.environment}:${key}`)}`;
    const claim: Claimed = {
      method: ctx.method,
      path: ctx.path,
      bodyHash: sha256(canonicalJson(rawBody) ?? rawBody),
      bodyForm: 'canonical-json',
      at: new Date(clock.now()).toISOString(),
    };
    const event = (type: string, data: JsonObject): NewEvent => ({
      id: newId(),
      type,
      data,
      metadata: {
        organizationId: tenant.organizationId,
        environment: tenant.environment,
        actor: tenant.actor,
        ...(tenant.clientAddress ? { clientAddress: tenant.clientAddress } : {}),
        correlationId: newId(),
        occurredAt: claim.at,
      },
    });

    let revision: number;
    for (;;) {
      const history = await eventStore.readStream(streamId);
      const lastClaim = [...history].reverse().find((e) => e.type === 'IdempotencyKeyClaimed');
      if (lastClaim) {
        const previous = lastClaim.data as unknown as Claimed;
        const sameBody = previous.bodyHash === (previous.bodyForm === undefined ? sha256(rawBody) : claim.bodyHash);
        const sameRequest = previous.method === claim.method && previous.path === claim.path && sameBody;
        const released = history.some((e) => e.type === 'IdempotencyKeyReleased' && e.revision > lastClaim.revision);
        // A released key did nothing that a retry could repeat: it is free for any request.
        if (!released) {
          if (!sameRequest) throw mismatch(key, previous, claim);
          const recorded = history.find(
            (e) => e.type === 'IdempotentResponseRecorded' && e.revision > lastClaim.revision,
          );
          if (recorded) {
            const { status, sealedBody, body } = recorded.data as unknown as Recorded;
            ctx.status = status;
            ctx.type = 'application/json';
            ctx.body = sealedBody === undefined ? (body ?? 'null') : secretBox.open(sealedBody);
            ctx.set('Idempotent-Replayed', 'true');
            return;
          }
          if (clock.now() - Date.parse(previous.at) < ABANDONED_AFTER_MS) {
            // Its own code: a client retries this one as it is, and fixes its code for a mismatch.
            throw new ConflictError(
              `the first request with Idempotency-Key ${key} is still being processed; send this one again after ${IN_PROGRESS_RETRY_AFTER_SECONDS} s (Retry-After)`,
              'idempotency_request_in_progress',
              IN_PROGRESS_RETRY_AFTER_SECONDS,
            );
          }
        }
      }
      const expected = history.length ? history[history.length - 1]!.revision : 'no_stream';
      try {
        const result = await eventStore.append(streamId, [event('IdempotencyKeyClaimed', claim)], expected);
        revision = result.nextExpectedRevision;
        break;
      } catch (error) {
        if (error instanceof WrongExpectedRevisionError) continue;
        throw error;
      }
    }

    // A run after one that failed (and released the key) may follow one that wrote before it failed:
    // the same ids make its creates find what that one wrote instead of writing it again.
    ctx.state.newId = seededIds(
      `${tenant.organizationId}:${tenant.environment}:${key}:${claim.method}:${claim.path}:${claim.bodyHash}`,
    );
    try {
      await next();
    } catch (error) {
      await eventStore.append(streamId, [event('IdempotencyKeyReleased', {})], revision);
      throw error;
    }
    // An error answer set without a throw (the router's 404, 405 and 501) gets its body only from the
    // error middleware, after this: recorded now it would be replayed as `null`. Such a request did nothing.
    if (ctx.status >= 400) {
      await eventStore.append(streamId, [event('IdempotencyKeyReleased', {})], revision);
      return;
    }
    const body =
      typeof ctx.body === 'string'
        ? ctx.body
        : Buffer.isBuffer(ctx.body)
          ? ctx.body.toString('utf8')
          : JSON.stringify(ctx.body ?? null);
    await eventStore.append(
      streamId,
      [event('IdempotentResponseRecorded', { status: ctx.status, sealedBody: secretBox.seal(body) })],
      revision,
    );
  }
}
