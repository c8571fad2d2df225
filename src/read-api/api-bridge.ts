import { randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import Koa from 'koa';
import inject from 'light-my-request';
import type { Environment } from '../event-store/event-store.ts';
import { ValidationError } from '../shared/errors.ts';
import type { ApiState, Tenant } from './api-context.ts';
import { MAX_BODY_BYTES } from './request-body.ts';
import { errorMiddleware, jsonBodyMiddleware } from './middleware.ts';
import { dispatchByResource } from './resource-dispatch.ts';

/** Who calls the API in process: a tenant, named in the log as `actor` (e.g. `user:<id>`), from `clientAddress`. */
export type ApiCaller = { organizationId: string; environment: Environment; actor: string; clientAddress: string };

/**
 * The API's answer as a client would read it: the status and the JSON body (the error shape on a
 * 4xx); on a 400 for one field, `field` names it (`lineItems.data[0].quantity`), so a form can mark it.
 */
export type ApiAnswer<T = unknown> = { status: number; body: T; field?: string };

/** A body sent as is, not as JSON: the brand form's `multipart/form-data` with its logo file. */
export class RawBody {
  constructor(
    readonly contentType: string,
    readonly bytes: Buffer,
  ) {}
}

/**
 * `/api/v1` called in process, for the dashboard: the same routes (schemas, commands, 400s naming
 * the field) as over HTTP, so no business rule has a second code path. The tenant is handed over
 * beside the request, never in it: this app listens on no port, and each call's id is used once.
 * A body is sent as JSON, or as is when it is a RawBody (an upload).
 */
export type ApiBridge = <T = unknown>(
  caller: ApiCaller,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
) => Promise<ApiAnswer<T>>;

const CALL_HEADER = 'x-weir-in-process-call';
const FIELD_HEADER = 'x-weir-field';

export function createApiBridge(routers: Router<ApiState>[]): ApiBridge {
  const callers = new Map<string, ApiCaller>();
  const app = new Koa<ApiState>();
  app.silent = true;
  app.use(errorMiddleware());
  app.use(async (ctx, next) => {
    const id = ctx.get(CALL_HEADER);
    const caller = callers.get(id);
    callers.delete(id);
    if (!caller) {
      ctx.status = 401;
      ctx.body = { message: 'not an in-process call' };
      return;
    }
    const tenant: Tenant = {
      organizationId: caller.organizationId,
      environment: caller.environment,
      keyId: caller.actor,
      actor: caller.actor,
      clientAddress: caller.clientAddress,
    };
    ctx.state.tenant = tenant;
    await next();
  });
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (error instanceof ValidationError && error.field) ctx.set(FIELD_HEADER, error.field);
      throw error;
    }
  });
  app.use(jsonBodyMiddleware(MAX_BODY_BYTES));
  app.use(dispatchByResource(routers));
  const handle = app.callback();

  return async (caller, method, path, body) => {
    const id = randomUUID();
    callers.set(id, caller);
    try {
      const payload =
        body === undefined
          ? {}
          : body instanceof RawBody
            ? { contentType: body.contentType, payload: body.bytes }
            : { contentType: 'application/json', payload: JSON.stringify(body) };
      const response = await inject(handle, {
        method,
        url: path,
        headers: { [CALL_HEADER]: id, ...(payload.contentType ? { 'content-type': payload.contentType } : {}) },
        ...(payload.payload === undefined ? {} : { payload: payload.payload }),
      });
      const text = response.payload;
      const field = response.headers[FIELD_HEADER];
      return {
        status: response.statusCode,
        body: text ? JSON.parse(text) : null,
        ...(typeof field === 'string' ? { field } : {}),
      };
    } finally {
      callers.delete(id);
    }
  };
}
