import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components, paths } from './schema.d.ts';

export type { components, paths, webhooks } from './schema.d.ts';

/** A Weir API client: every path, parameter, body and answer typed from Weir's OpenAPI document. */
export type WeirClient = Client<paths>;

/** A named schema of the document, e.g. `WeirSchema<'Error'>`. */
export type WeirSchema<Name extends keyof components['schemas']> = components['schemas'][Name];

export type WeirClientOptions = {
  /** Where Weir answers, e.g. `https://pay.example.com` (no `/api/v1`: paths carry it). */
  baseUrl: string;
  /** A secret key (`sk_test_…` / `sk_live_…`); omit it for the public routes. */
  apiKey?: string;
  /** Headers sent with every request, besides the key. */
  headers?: Record<string, string>;
  /** Another fetch (tests, proxies, retries). */
  fetch?: ClientOptions['fetch'];
};

/**
 * A client for one Weir and one key: `weir.POST('/api/v1/checkout/sessions', { body })` answers
 * `{ data, error, response }`, `data` typed by the route's 2xx answer and `error` by its errors.
 */
export function createWeirClient(options: WeirClientOptions): WeirClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: {
      ...options.headers,
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** A request's `data`, or a thrown error naming the status and Weir's `{ code, message }`. */
export function expectData<T>(
  result: { data?: T; error?: unknown; response: Response },
  what = `${result.response.url}`,
): T {
  if (result.data !== undefined && result.response.ok) return result.data;
  throw new Error(`${what}: ${result.response.status} ${JSON.stringify(result.error ?? null)}`);
}
