import { NotFoundError, WeirError } from '../shared/errors.ts';
import type { PageApi } from './api.ts';

/**
 * Reads through the API bridge for pages: a record (its 404 is the page's 404) or a list's data.
 * Any other refusal is the API's own error, shown by the dashboard's error page.
 */
function failed(status: number, body: unknown): never {
  const message = (body as { message?: unknown } | null)?.message;
  throw new WeirError(status, 'Error', 'api_error', typeof message === 'string' ? message : `HTTP ${status}`);
}

export async function readOne<T>(api: PageApi, path: string, what: string, id: string): Promise<T> {
  const answer = await api<T>('GET', path);
  if (answer.status === 404) throw new NotFoundError(what, id);
  if (answer.status >= 400) failed(answer.status, answer.body);
  return answer.body;
}

export async function readList<T>(api: PageApi, path: string): Promise<T[]> {
  const answer = await api<{ data: T[] }>('GET', path);
  if (answer.status >= 400) failed(answer.status, answer.body);
  return answer.body.data;
}
