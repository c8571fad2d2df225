import type { ApiAnswer } from '../read-api/api-bridge.ts';
import type { DashboardContext, DashboardDeps } from './context.ts';

/** A signed-in page's calls to `/api/v1`, as its user: the log names `user:<id>` and the client's address. */
export type PageApi = <T = unknown>(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
) => Promise<ApiAnswer<T>>;

export const apiFor =
  (ctx: DashboardContext, deps: Pick<DashboardDeps, 'api'>): PageApi =>
  (method, path, body) =>
    deps.api({ ...ctx.state.tenant, actor: `user:${ctx.state.user.id}`, clientAddress: ctx.ip }, method, path, body);
