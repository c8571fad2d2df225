import Router from '@koa/router';
import test from 'ava';
import { routeTableKey } from './document-key.ts';
import { type MountedAreas, mountedRoutes, openApiDocument } from './openapi-document.ts';
import { schemaRoutes } from './route.ts';

const routerOf = (...paths: string[]): Router<never> => {
  const router = new Router({ prefix: '/api/v1' });
  const routes = schemaRoutes(router, { tag: 'Things', auth: 'secretKey' });
  for (const path of paths) routes.route({ method: 'get', path, summary: `Read ${path}` }, () => ({}));
  return router as unknown as Router<never>;
};

test('the mounted routes are every layer of every router of every area, in mount order; an area with no router has none', (t) => {
  const areas: MountedAreas = {
    api: [routerOf('/a'), routerOf('/b', '/c')],
    admin: routerOf('/d'),
    off: null,
    gone: undefined,
  };
  t.deepEqual(
    [...mountedRoutes(areas)].map(({ area, layer }) => `${area} ${layer.path}`),
    ['api /api/v1/a', 'api /api/v1/b', 'api /api/v1/c', 'admin /api/v1/d'],
  );
});

test('the route table key and the document see the same routes: one added to a second router of an area changes both', (t) => {
  const info = { version: 'test' };
  const one: MountedAreas = { api: [routerOf('/a')] };
  const two: MountedAreas = { api: [routerOf('/a'), routerOf('/b')] };
  t.is(routeTableKey(one, info), routeTableKey({ api: [routerOf('/a')] }, info), 'the same routes: the same key');
  t.not(routeTableKey(one, info), routeTableKey(two, info));
  const paths = (areas: MountedAreas) => Object.keys(openApiDocument(areas, info).paths ?? {});
  t.true(paths(two).includes('/api/v1/b'));
  t.false(paths(one).includes('/api/v1/b'));
  t.is(routeTableKey({ api: routerOf('/a'), admin: null }, info), routeTableKey(one, info));
});
