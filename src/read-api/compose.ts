import type Koa from 'koa';

/** Run middlewares in order as one (the koa-compose contract). */
export function compose<S>(middlewares: Koa.Middleware<S>[]): Koa.Middleware<S> {
  return (ctx, next) => {
    let last = -1;
    const dispatch = (i: number): Promise<void> => {
      if (i <= last) return Promise.reject(new Error('next() called more than once'));
      last = i;
      const middleware = i === middlewares.length ? next : middlewares[i];
      if (!middleware) return Promise.resolve();
      try {
        return Promise.resolve(middleware(ctx, () => dispatch(i + 1)));
      } catch (error) {
        return Promise.reject(error);
      }
    };
    return dispatch(0);
  };
}
