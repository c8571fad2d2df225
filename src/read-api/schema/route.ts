import type Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { z } from 'zod';
import { ValidationError } from '../../shared/errors.ts';
import { messageAndCode, unknownQueryParameter } from './fields.ts';

/** How a caller authenticates: a secret key (`/api/v1`), nothing (public pages), or the operator's admin token. */
export type Auth = 'secretKey' | 'public' | 'admin';

/** An error answer a route gives besides the common ones (auth, body, rate limits), with its codes. */
export type ErrorSpec = {
  status: number;
  codes: readonly string[];
  description?: string;
  /** Headers the answer may carry, by name: their description (`Retry-After` is whole seconds). */
  headers?: Readonly<{ 'Retry-After'?: string }>;
};

/** What a route answers when it is not JSON: a page, a file or a script (documented as a string of that type). */
export type Produces = 'text/html' | 'application/pdf' | 'text/javascript' | 'text/css' | 'image/svg+xml';

/** A non-JSON answer: a page in the route's `produces` type at this status, or a redirect (`Location`). */
export type PageAnswer = {
  status: number;
  description: string;
  redirect?: true;
  /** A page of another type than the route's own (a PDF route's refusals are HTML pages). */
  produces?: Produces;
};

/** A request body's media types: JSON (what `body` parses), a form, or a form with files. */
export type BodyType = 'application/json' | 'application/x-www-form-urlencoded' | 'multipart/form-data';

type Method = 'get' | 'post' | 'put' | 'delete' | 'patch';
/** What `declaredPost` reads of a router's layer. */
type RouterLayer = { methods: string[]; match(path: string): boolean };
type AnyObject = z.ZodType<Record<string, unknown>, unknown>;

/** Everything a route says about itself, once: it validates the request, types the handler and feeds the OpenAPI document. */
export type RouteSpec<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> = {
  method: Method;
  /** Relative to the router's prefix, in @koa/router's syntax (`/:id`). */
  path: string;
  summary: string;
  description?: string;
  /** Default: the helper's tag. */
  tag?: string;
  /** Default: the helper's auth. */
  auth?: Auth;
  params?: P;
  query?: Q;
  body?: B;
  /** An absent (or null) body is read as `{}` (action routes whose body is all optional). */
  bodyOptional?: boolean;
  /** The 200 answer's schema; a route without one is documented without a body schema. */
  response?: z.ZodType;
  /** The answer's media type when it is not JSON (`response` is then unused). */
  produces?: Produces | readonly Produces[];
  /** With `produces`: every answer it gives in that type, or as a redirect (the 200 among them; default: a 200). */
  pages?: readonly PageAnswer[];
  /**
   * Bodies the handler reads and checks itself (a form, an upload, JSON it parses once it knows
   * which it got), by media type, as the document shows them; `body` stays the JSON one parsed here.
   */
  bodyTypes?: Partial<Record<BodyType, z.ZodType>>;
  errors?: readonly ErrorSpec[];
  /** Shown in the document: a request body and a 200 answer. */
  examples?: { request?: unknown; response?: unknown };
  /** Whether a POST takes `Idempotency-Key`; default true for POST. False: the middleware ignores a key sent (idempotency.ts `keylessPost`). */
  idempotent?: boolean;
  /**
   * A POST that only reads (a query sent as a body): a key of a reading scope may send it
   * (scopes.ts), and, writing nothing, it takes no `Idempotency-Key`.
   */
  readsOnly?: true;
};

export type RouteInput<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> = {
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
};

/** A route as the document reads it: its declaration and where it is mounted. */
export type DeclaredRoute = RouteSpec & { tag: string; auth: Auth };

const declarations = new WeakMap<object, DeclaredRoute>();

/** The declaration of a router layer, if it was declared with `schemaRoutes`. */
export const declarationOf = (layer: object): DeclaredRoute | undefined => declarations.get(layer);

/** Whether a POST to a path goes to a route of `routers` whose declaration passes `test`. */
export function declaredPost(
  routers: readonly { stack: readonly RouterLayer[] }[],
  test: (route: DeclaredRoute) => boolean,
): (path: string) => boolean {
  const layers = routers
    .flatMap((router) => router.stack)
    .filter((layer) => {
      const declared = layer.methods.includes('POST') ? declarationOf(layer) : undefined;
      return declared !== undefined && test(declared);
    });
  return (path) => layers.some((layer) => layer.match(path));
}

/** `lineItems.data[0].quantity` from zod's path. */
export function fieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

type Issue = z.core.$ZodIssue;

/**
 * An unknown key first (a misspelt `successURL` is named as such, not as `successUrl` missing),
 * else the first issue.
 */
const firstIssue = (issues: readonly Issue[]): Issue | undefined =>
  issues.find((issue) => issue.code === 'unrecognized_keys') ?? issues[0];

/**
 * The issue the API reports: an unknown key, else the first one (fields are checked in declaration order, as the
 * hand-written checks did). In a union, the branch that got furthest into the value speaks.
 */
function reportedIssue(issues: readonly Issue[], base: PropertyKey[] = []): { path: PropertyKey[]; message: string } {
  const issue = firstIssue(issues)!;
  const path = [...base, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    const depth = (branch: readonly Issue[]) => {
      const first = firstIssue(branch);
      return first ? first.path.length + (first.code === 'unrecognized_keys' ? 1 : 0) : -1;
    };
    const best = issue.errors.reduce((a, b) => (depth(b) > depth(a) ? b : a));
    // No branch got past the value's own type: the union's message says what it takes.
    if (depth(best) > 0) return reportedIssue(best, path);
  }
  if (issue.code === 'unrecognized_keys') return { path: [...path, issue.keys[0]!], message: issue.message };
  return { path, message: issue.message };
}

/** The 400 a failed parse answers with: the field's full path, the field's message and code. */
export function validationErrorOf(error: z.ZodError): ValidationError {
  const { path, message: raw } = reportedIssue(error.issues);
  const { message, code } = messageAndCode(raw);
  const field = fieldPath(path);
  return new ValidationError(field || null, message, code);
}

/** Parses `value` with `schema`, or throws the API's 400. */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown): z.output<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw validationErrorOf(result.error);
  return result.data;
}

/** The query as routes read it: of a repeated name, the last value. */
const lastValues = (query: Record<string, string | string[] | undefined>) =>
  Object.fromEntries(
    Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v[v.length - 1] : v] as const),
  ) as Record<string, string | undefined>;

/**
 * Schema-first routes on a @koa/router: `route(spec, handler)` validates params, query and body
 * with the spec's schemas (a 400 naming the field path on failure), hands the handler their
 * parsed values, answers with what it returns, and records the spec for the OpenAPI document.
 */
export function schemaRoutes<S>(router: Router<S>, defaults: { tag: string; auth: Auth }) {
  return {
    route<
      P extends AnyObject = z.ZodType<Record<string, string>>,
      Q extends z.ZodType = z.ZodType<Record<string, string | undefined>>,
      B extends z.ZodType = z.ZodType<unknown>,
    >(
      // `before`: checks that answer before the request is parsed (a 403 for a live key comes before any 400).
      spec: RouteSpec<P, Q, B> & { before?: (ctx: RouterContext<S>) => void },
      handler: (ctx: RouterContext<S>, input: RouteInput<P, Q, B>) => unknown,
    ): void {
      // The APIs (a secret key's, the operator's) refuse a query parameter a route does not declare (a
      // `?force=1` typo on a delete too); pages take what browsers add.
      const closedQuery = (spec.auth ?? defaults.auth) !== 'public';
      const run = async (ctx: RouterContext<S>) => {
        const unknown = closedQuery ? unknownQueryParameter(spec.query, ctx.query) : null;
        if (unknown) throw new ValidationError(unknown.name, unknown.message);
        spec.before?.(ctx);
        const params = spec.params ? parseWith(spec.params, ctx.params) : ctx.params;
        const query = lastValues(ctx.query);
        const parsedQuery = spec.query ? parseWith(spec.query, query) : query;
        let body: unknown = (ctx.state as { body?: unknown }).body;
        if (spec.bodyOptional && (body === undefined || body === null)) body = {};
        const parsedBody = spec.body ? parseWith(spec.body, body) : body;
        const answer = await handler(ctx, {
          params: params as z.output<P>,
          query: parsedQuery as z.output<Q>,
          body: parsedBody as z.output<B>,
        });
        if (answer !== undefined) ctx.body = answer;
      };
      router[spec.method](spec.path, run);
      const layer = router.stack[router.stack.length - 1];
      if (layer)
        declarations.set(layer, {
          ...(spec as unknown as RouteSpec),
          tag: spec.tag ?? defaults.tag,
          auth: spec.auth ?? defaults.auth,
        });
    },
  };
}
