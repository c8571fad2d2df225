import { responseCheckFor } from './response-check.ts';

/** A tiny JSON client for Weir's HTTP API, for tests and benchmarks. */
export type ApiResponse<T = Record<string, unknown>> = { status: number; body: T; headers: Headers };

/**
 * Each answer is checked against the OpenAPI document the server serves (see response-check.ts):
 * one that does not match its route's declared schema throws. `checkResponses: false` skips it.
 */
export function apiClient(baseUrl: string, key?: string, options: { checkResponses?: boolean } = {}) {
  const check = () => (options.checkResponses === false ? null : responseCheckFor(baseUrl));
  async function call<T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse<T>> {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON: keep text */
    }
    (await check())?.(method, `${baseUrl}${path}`, response.status, response.headers.get('content-type') ?? '', parsed);
    return { status: response.status, body: parsed as T, headers: response.headers };
  }
  return {
    call,
    get: <T = Record<string, unknown>>(path: string) => call<T>('GET', path),
    post: <T = Record<string, unknown>>(path: string, body?: unknown, headers?: Record<string, string>) =>
      call<T>('POST', path, body ?? {}, headers),
    put: <T = Record<string, unknown>>(path: string, body: unknown) => call<T>('PUT', path, body),
    delete: <T = Record<string, unknown>>(path: string) => call<T>('DELETE', path),
  };
}

/** Poll `probe` until it returns a value (not undefined); for effects that happen asynchronously. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
