import type Koa from 'koa';

/**
 * Run middlewares in order as one (the koa-compose contract). Nothing here is a function created
 * per request with a name of its own: tsx keeps function names by calling a helper that redefines
 * `name` on each new named function, which on the hot path cost more than the dispatch itself.
 */
export function compose<S>(middlewares: Koa.Middleware<S>[]): Koa.Middleware<S> {
  return (ctx, next) => dispatchFrom(middlewares, 0, ctx, next, { last: -1 });
}

function dispatchFrom<S>(
  middlewares: Koa.Middleware<S>[],
  index: number,
  ctx: Koa.ParameterizedContext<S>,
  next: Koa.Next,
  calls: { last: number },
): Promise<void> {
  if (index <= calls.last) return Promise.reject(new Error('next() called more than once'));
  calls.last = index;
  const middleware = index === middlewares.length ? next : middlewares[index];
  if (!middleware) return Promise.resolve();
  try {
    return Promise.resolve(middleware(ctx, () => dispatchFrom(middlewares, index + 1, ctx, next, calls)));
  } catch (error) {
    return Promise.reject(error);
  }
}
