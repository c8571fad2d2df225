import type Router from '@koa/router';
import {
  OpenAPIRegistry,
  OpenApiGeneratorV31,
  type ResponseConfig,
  type RouteConfig,
} from '@asteasolutions/zod-to-openapi';
import { SCOPE_REFUSED } from '../scopes.ts';
import { ErrorBodySchema, listBoundsDescription, z } from './fields.ts';
import {
  type Auth,
  declarationOf,
  type DeclaredRoute,
  type ErrorSpec,
  type PageAnswer,
  type Produces,
} from './route.ts';
import { nullableReferences } from './nullable-references.ts';
import { withResponseHeaders } from './response-headers.ts';
import { operationIds } from './operation-ids.ts';
import { validationCodes } from './validation-codes.ts';
import { WEBHOOKS_TAG_DESCRIPTION, webhookDefinitions } from './webhook-payloads.ts';

/** The routers of each area, as `httpRouters` gives them. */
export type MountedAreas = Record<string, Router<never> | Router<never>[] | null | undefined>;

/** One route (a router's layer) of the area that mounts it. */
export type MountedRoute = { area: string; layer: Router<never>['stack'][number] };

/**
 * Every route the areas' routers hold, in mount order: the one walk the document and its cache key
 * (`routeTableKey`) both take, so they cannot disagree on which routes exist.
 */
export function* mountedRoutes(areas: MountedAreas): Generator<MountedRoute> {
  for (const [area, mounted] of Object.entries(areas)) {
    const routers = mounted ? (Array.isArray(mounted) ? mounted : [mounted]) : [];
    for (const router of routers) for (const layer of router.stack) yield { area, layer };
  }
}

export const OPENAPI_PATH = '/api/v1/openapi.json';

type Method = RouteConfig['method'];
const METHODS: readonly Method[] = ['get', 'post', 'put', 'delete', 'patch'];

const STATUS_NAMES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/** How each area's callers authenticate (routes not declared with a schema yet). */
const AREA_AUTH: Record<string, Auth> = { api: 'secretKey', admin: 'admin' };

/** `/api/v1/customers/:id` as OpenAPI writes it, and its parameter names. */
export function openApiPath(koaPath: string): { path: string; names: string[] } {
  const names: string[] = [];
  let path = koaPath.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    names.push(name);
    return `{${name}}`;
  });
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  return { path, names };
}

/** The hosted pages' areas: every request to them is counted per client address (rate-limits.ts `hosted`). */
const HOSTED_AREAS = new Set(['checkout', 'invoices', 'pay']);

const rateLimited = (description: string): ErrorSpec => ({
  status: 429,
  codes: ['rate_limited'],
  description: `${description}: see Retry-After`,
  headers: { 'Retry-After': 'With `rate_limited`: seconds to wait before sending a request again' },
});

/** Why a route of this area and auth can answer 429, or null where nothing is counted (the docs, the assets). */
function rateLimitOf(area: string, auth: Auth): ErrorSpec | null {
  if (auth === 'secretKey')
    return rateLimited("The key's rate limit is spent, or this address failed authentication too often");
  if (auth === 'admin') return rateLimited('This address failed authentication too often');
  if (HOSTED_AREAS.has(area))
    return rateLimited('Too many requests to the payment pages, or payments started, from this address');
  return null;
}

/**
 * The errors any route of its kind can answer, whatever it declares. `reads`: a GET, or a POST
 * declared `readsOnly`, which a reading key may send and which writes nothing.
 */
function commonErrors(
  area: string,
  auth: Auth,
  { reads, takesBody, idempotent }: { reads: boolean; takesBody: boolean; idempotent: boolean },
): ErrorSpec[] {
  const errors: ErrorSpec[] = [];
  const limit = rateLimitOf(area, auth);
  if (limit) errors.push(limit);
  if (auth === 'secretKey')
    errors.push({
      status: 401,
      codes: ['authentication_required'],
      description: 'The secret key is missing, malformed or unknown',
    });
  if (auth === 'secretKey' && !reads)
    errors.push({
      status: 403,
      codes: [SCOPE_REFUSED],
      description: 'A key of a reading scope (`read`, `audit`): it only reads',
    });
  // The APIs refuse a query parameter a route does not take (route.ts `closedQuery`); pages take what browsers add.
  if (auth !== 'public')
    errors.push({
      status: 400,
      codes: ['parameter_invalid'],
      description: 'A query parameter the route does not take: the message names it',
    });
  if (auth === 'admin')
    errors.push({
      status: 401,
      codes: ['authentication_required'],
      description: 'The admin token is missing or wrong',
    });
  if (takesBody)
    errors.push(
      {
        status: 400,
        codes: ['invalid_json', 'invalid_content_type', 'request_aborted'],
        description: 'The body is not a JSON object sent as application/json',
      },
      { status: 413, codes: ['request_too_large'], description: 'The body is over the limit' },
      { status: 415, codes: ['unsupported_content_encoding'], description: 'The body is compressed' },
    );
  if (!reads && auth === 'secretKey')
    errors.push({
      status: 503,
      codes: ['read_models_behind'],
      description: 'Written, but not readable in time: retry with the same Idempotency-Key',
    });
  if (idempotent)
    errors.push(
      {
        status: 409,
        codes: ['idempotency_key_in_use'],
        description:
          'The Idempotency-Key was used on another path or with another body: send this request with a new key',
      },
      {
        status: 409,
        codes: ['idempotency_request_in_progress'],
        description:
          'The first request with this Idempotency-Key is still running: send this one again after Retry-After',
        headers: {
          'Retry-After': 'With `idempotency_request_in_progress`: seconds to wait before sending the request again',
        },
      },
      {
        status: 400,
        codes: ['parameter_invalid'],
        description: 'Idempotency-Key is empty, sent twice, over 255 characters or holds a control character',
      },
    );
  return errors;
}

/** One response per status, listing its codes, with an example body for each. */
function errorResponses(errors: readonly ErrorSpec[]): Record<number, ResponseConfig> {
  const byStatus = new Map<
    number,
    { codes: Set<string>; descriptions: string[]; headers: Record<string, { description: string }> }
  >();
  for (const e of errors) {
    const entry = byStatus.get(e.status) ?? { codes: new Set<string>(), descriptions: [], headers: {} };
    for (const code of e.codes) entry.codes.add(code);
    if (e.description && !entry.descriptions.includes(e.description)) entry.descriptions.push(e.description);
    for (const [name, description] of Object.entries(e.headers ?? {})) entry.headers[name] = { description };
    byStatus.set(e.status, entry);
  }
  const responses: Record<number, ResponseConfig> = {};
  for (const [status, { codes, descriptions, headers }] of [...byStatus].sort(([a], [b]) => a - b)) {
    const error = STATUS_NAMES[status] ?? 'Error';
    const list = [...codes];
    responses[status] = {
      description: `${descriptions.join('; ') || error}. Codes: ${list.map((c) => `\`${c}\``).join(', ')}`,
      ...(Object.keys(headers).length
        ? {
            headers: Object.fromEntries(
              Object.entries(headers).map(([name, { description }]) => [
                name,
                { description, schema: { type: 'integer' as const, minimum: 0 } },
              ]),
            ),
          }
        : {}),
      content: {
        'application/json': {
          schema: ErrorBodySchema,
          examples: Object.fromEntries(
            list.map((code) => [code, { value: { statusCode: status, error, message: `(${code})`, code } }]),
          ),
        },
      },
    };
  }
  return responses;
}

const idempotencyHeader = z.object({
  'Idempotency-Key': z.string().min(1).max(255).optional().openapi({
    description:
      "Makes the POST safe to retry: the same key and body within 24 hours answer the first response again (Idempotent-Replayed: true), creating nothing twice. A key is bound to its first request's path and body (another is a 409 `idempotency_key_in_use`); sent while that request still runs, a 409 `idempotency_request_in_progress` with Retry-After. Empty, sent twice or holding a control character is a 400",
    example: 'order-6735-create',
  }),
});

const pathParams = (names: string[]) =>
  z.object(Object.fromEntries(names.map((name) => [name, z.string()])) as Record<string, z.ZodString>);

/** A page or a file as the document shows it: a string of its type (bytes for a PDF). */
const producedSchema = (type: Produces) =>
  type === 'application/pdf' ? { type: 'string' as const, format: 'binary' } : { type: 'string' as const };

const producedContent = (types: Produces | readonly Produces[]) =>
  Object.fromEntries(
    (typeof types === 'string' ? [types] : types).map((type) => [type, { schema: producedSchema(type) }]),
  );

/** Adds a route's non-JSON answers: pages of its type, and redirects; a status that also has JSON errors gets both. */
function addPages(
  responses: Record<number, ResponseConfig>,
  type: Produces | readonly Produces[],
  pages: readonly PageAnswer[],
) {
  for (const page of pages) {
    const answer = page.redirect
      ? {
          description: page.description,
          headers: { Location: { description: 'Where the browser goes next', schema: { type: 'string' as const } } },
        }
      : { description: page.description, content: producedContent(page.produces ?? type) };
    const json = responses[page.status];
    // Both keep their headers: a 429 page says when to come back as its JSON error does.
    responses[page.status] = json
      ? {
          ...json,
          ...answer,
          description: `${page.description}; or ${json.description}`,
          content: { ...json.content, ...answer.content },
          ...(json.headers || 'headers' in answer ? { headers: { ...json.headers, ...answer.headers } } : {}),
        }
      : answer;
  }
}

/**
 * The 400s a route's own schemas answer (route.ts parses params, the query and the JSON body with
 * them), read from the schemas: a field added answers no code the document does not list.
 */
export function schemaErrors(route: Pick<DeclaredRoute, 'params' | 'query' | 'body' | 'bodyOptional'>): ErrorSpec[] {
  const codes = new Set<string>();
  const always = { undefined: false, null: false };
  // Path and query values are strings (a query's may be absent): no other type reaches their schemas.
  const strings = { ...always, strings: true };
  if (route.params) for (const code of validationCodes(route.params, { ...strings, present: true })) codes.add(code);
  if (route.query) for (const code of validationCodes(route.query, strings)) codes.add(code);
  if (route.body)
    for (const code of validationCodes(route.body, route.bodyOptional ? always : { undefined: true, null: true }))
      codes.add(code);
  return codes.size === 0
    ? []
    : [{ status: 400, codes: [...codes], description: 'A field is missing or invalid: the message names its path' }];
}

function declaredOperation(
  area: string,
  route: DeclaredRoute,
  method: Method,
  path: string,
  names: string[],
): RouteConfig {
  const bodies = { ...(route.body ? { 'application/json': route.body } : {}), ...route.bodyTypes };
  // A list's date bounds and its `timezone` are said alike on every list.
  const description = [route.description, listBoundsDescription(route.query)].filter(Boolean).join(' ');
  // The common body errors are the JSON reader's: a route that takes only a form does not meet them.
  const takesBody = bodies['application/json'] !== undefined;
  const reads = method === 'get' || route.readsOnly === true;
  const idempotent = method === 'post' && route.auth === 'secretKey' && route.idempotent !== false && !reads;
  const request: NonNullable<RouteConfig['request']> = {};
  if (route.params) request.params = route.params as z.ZodObject;
  else if (names.length) request.params = pathParams(names);
  if (route.query) request.query = route.query as z.ZodObject;
  if (idempotent) request.headers = idempotencyHeader;
  if (Object.keys(bodies).length > 0)
    request.body = {
      required: !route.bodyOptional,
      content: Object.fromEntries(
        Object.entries(bodies).map(([type, schema]) => [
          type,
          {
            schema,
            ...(type === 'application/json' && route.examples?.request !== undefined
              ? { example: route.examples.request }
              : {}),
          },
        ]),
      ),
    };
  const responses = errorResponses([
    ...commonErrors(area, route.auth, { reads, takesBody, idempotent }),
    ...schemaErrors(route),
    ...(route.errors ?? []),
  ]);
  if (route.produces) addPages(responses, route.produces, route.pages ?? [{ status: 200, description: 'OK' }]);
  else
    responses[200] = {
      description: 'OK',
      ...(route.response
        ? {
            content: {
              'application/json': {
                schema: route.response,
                ...(route.examples?.response === undefined ? {} : { example: route.examples.response }),
              },
            },
          }
        : {}),
    };
  return {
    method,
    path,
    summary: route.summary,
    ...(description ? { description } : {}),
    tags: [route.tag],
    security: securityOf(route.auth),
    request,
    responses,
  };
}

const securityOf = (auth: Auth) =>
  auth === 'secretKey' ? [{ secretKey: [] }] : auth === 'admin' ? [{ adminToken: [] }] : [];

const AREA_TAGS: Record<string, string> = {
  checkout: 'Hosted checkout',
  invoices: 'Hosted invoices',
  pay: 'Hosted payment links',
  assets: 'Static assets',
  admin: 'Admin',
  docs: 'Docs',
};

/** A tag for a route not declared yet: its resource (`/api/v1/invoices/…` → Invoices), or its area. */
function tagOf(area: string, path: string): string {
  const resource = /^\/api\/v1\/([a-z-]+)/.exec(path)?.[1];
  if (area !== 'api') return AREA_TAGS[area] ?? area;
  const name = resource ?? 'API';
  return name.charAt(0).toUpperCase() + name.slice(1).replace(/-/g, ' ');
}

function undeclaredOperation(area: string, method: Method, path: string, names: string[]): RouteConfig {
  const auth = AREA_AUTH[area] ?? 'public';
  const takesBody = method !== 'get' && method !== 'delete';
  const idempotent = method === 'post' && auth === 'secretKey';
  return {
    method,
    path,
    summary: `${method.toUpperCase()} ${path}`,
    description: 'Not declared with a schema yet: its request and answer bodies are not described here.',
    tags: [tagOf(area, path)],
    security: securityOf(auth),
    request: {
      ...(names.length ? { params: pathParams(names) } : {}),
      ...(idempotent ? { headers: idempotencyHeader } : {}),
    },
    responses: {
      200: { description: 'OK' },
      ...errorResponses([
        ...commonErrors(area, auth, { reads: method === 'get', takesBody, idempotent }),
        { status: 404, codes: ['resource_missing'], description: 'Nothing with this id' },
      ]),
    },
  };
}

/** Routes that no router holds: the health check and the metrics. */
const EXTRA_ROUTES: RouteConfig[] = [
  {
    method: 'get',
    path: '/health',
    summary: "Weir's health, for load balancers and operators",
    tags: ['Operations'],
    security: [],
    responses: {
      200: { description: '`ok` or `degraded`' },
      503: { description: '`failing`' },
    },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: "Weir's metrics in the Prometheus text format, for the operator's Prometheus",
    description:
      'Open to anyone while Weir listens on a loopback address with no proxy in front (`WEIR_TRUST_PROXY` unset); otherwise the admin token is needed.',
    tags: ['Operations'],
    security: [{}, { adminToken: [] }],
    responses: {
      200: {
        description: 'Every family, `text/plain; version=0.0.4`',
        content: { 'text/plain': { schema: { type: 'string' } } },
      },
      ...errorResponses([
        { status: 400, codes: ['parameter_invalid'], description: 'A query parameter (it takes none)' },
        {
          status: 401,
          codes: ['authentication_required'],
          description: 'Beyond loopback: no admin token, or another one',
        },
        { status: 403, codes: ['metrics_need_admin_token'], description: 'Beyond loopback, and no admin token is set' },
        rateLimited('Beyond loopback: this address failed authentication too often'),
      ]),
    },
  },
];

/**
 * The OpenAPI 3.1 document of every route the areas' routers serve: the declared ones in full
 * (schemas, errors with their codes, examples), the others by method, path and generic answers;
 * and the webhooks Weir sends.
 */
export function openApiDocument(areas: MountedAreas, info: { version: string; serverUrl?: string }) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'secretKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'A secret key of an organization: `sk_test_…` (test mode) or `sk_live_…`',
  });
  registry.registerComponent('securitySchemes', 'adminToken', {
    type: 'http',
    scheme: 'bearer',
    description: "The operator's WEIR_ADMIN_TOKEN (the admin API is off without one)",
  });
  registry.register('Error', ErrorBodySchema);
  const seen = new Set<string>();
  const idOf = operationIds();
  const named = (route: RouteConfig): RouteConfig => ({
    ...route,
    operationId: idOf(route.method, route.path, route.tags?.[0] ?? ''),
  });
  for (const { area, layer } of mountedRoutes(areas)) {
    const declared = declarationOf(layer);
    const { path, names } = openApiPath(layer.path as string);
    for (const upper of layer.methods) {
      const method = upper.toLowerCase() as Method;
      if (!METHODS.includes(method)) continue;
      // The first router that has a method and path answers it (dispatch tries them in order).
      const key = `${method} ${path}`;
      if (seen.has(key)) continue;
      seen.add(key);
      registry.registerPath(
        named(
          declared
            ? declaredOperation(area, declared, method, path, names)
            : undeclaredOperation(area, method, path, names),
        ),
      );
    }
  }
  for (const route of EXTRA_ROUTES) registry.registerPath(named(route));
  for (const webhook of webhookDefinitions()) registry.registerWebhook(webhook);
  // Tags in the order routes are mounted (the API first), the webhooks last.
  const tags = new Set<string>();
  for (const definition of registry.definitions)
    if (definition.type === 'route') for (const tag of definition.route.tags ?? []) tags.add(tag);
  tags.add('Webhooks');
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    tags: [...tags].map((name) => (name === 'Webhooks' ? { name, description: WEBHOOKS_TAG_DESCRIPTION } : { name })),
    info: {
      title: 'Weir API',
      version: info.version,
      description:
        "Weir is a self-hostable crypto payment gateway. Amounts (`unitAmount`, `amountTotal` and the like) are digit strings scaled by 10^8 whatever the asset's own decimals: `150000000` is 1.50 USDC, or 1.50 ETH, or 1.50 DAI (the reference API documents them as integers; Weir keeps them exact). Fields in an asset's chain units say so (`amountRaw`; gas in wei). Every error answers `{statusCode, error, message, code}`; a 400 names the field path at fault.",
    },
    // Relative by default: a client resolves `/` against wherever it fetched the document, which is this Weir.
    servers: [{ url: info.serverUrl ?? '/' }],
  });
  return withResponseHeaders(nullableReferences(document));
}
