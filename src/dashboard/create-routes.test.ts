import test from 'ava';
import type { DashboardContext, DashboardDeps } from './context.ts';
import { createRoutes, type NewForm } from './create-routes.ts';
import type { PageHandler, PageRoutes } from './page.ts';

/** The routes `createRoutes` declares, an API answering `answer`, and a request to send them. */
function world(answer: { status: number; body: unknown; field?: string }) {
  const handlers = new Map<string, PageHandler>();
  const routes: PageRoutes = {
    get: (path, permission, handler) => handlers.set(`GET ${path} ${permission}`, handler),
    post: (path, permission, handler) => handlers.set(`POST ${path} ${permission}`, handler),
  };
  const sent: unknown[] = [];
  const deps: Pick<DashboardDeps, 'api'> = {
    api: async <T>(_caller: unknown, _method: string, path: string, body?: unknown) => {
      sent.push({ path, body });
      return answer as { status: number; body: T; field?: string };
    },
  };
  const shown: NewForm[] = [];
  createRoutes(routes, deps, {
    base: '/dashboard/widgets',
    apiPath: '/api/v1/widgets',
    build: (form) =>
      form.get('size') === 'huge' ? { errors: { size: 'too big' } } : { body: { name: form.get('name') } },
    inputOf: (field) => (field === 'name' ? 'name' : undefined),
    show: async (_ctx, form) => {
      shown.push(form);
    },
  });
  const request = async (key: string, form: Record<string, string> = {}) => {
    let location: string | undefined;
    const ctx = {
      state: {
        form: new URLSearchParams(form),
        tenant: { organizationId: 'org', environment: 'test' },
        user: { id: 'u' },
      },
      ip: '127.0.0.1',
      get: () => '',
      redirect: (to: string) => {
        location = to;
      },
    } as unknown as DashboardContext;
    await handlers.get(key)!(ctx);
    return location;
  };
  return { handlers, sent, shown, request };
}

test('the new form shows blank; the form refused by its own check or by the API shows again as typed, the refusal at its input', async (t) => {
  const refused = world({ status: 400, body: { message: 'name: is taken' }, field: 'name' });
  t.deepEqual([...refused.handlers.keys()], ['GET /dashboard/widgets/new manage', 'POST /dashboard/widgets manage']);
  await refused.request('GET /dashboard/widgets/new manage');
  t.deepEqual(refused.shown.pop(), { values: {}, errors: {}, status: 200 });

  await refused.request('POST /dashboard/widgets manage', { name: 'Flange', size: 'huge' });
  t.deepEqual(refused.shown.pop(), {
    values: { name: 'Flange', size: 'huge' },
    errors: { size: 'too big' },
    status: 400,
  });
  t.deepEqual(refused.sent, [], 'nothing sent');

  await refused.request('POST /dashboard/widgets manage', { name: 'Flange' });
  t.deepEqual(refused.sent, [{ path: '/api/v1/widgets', body: { name: 'Flange' } }]);
  t.deepEqual(refused.shown.pop(), { values: { name: 'Flange' }, errors: { name: 'is taken' }, status: 400 });
});

test('a record made goes to its page, which says it was created (as a page saved from says so)', async (t) => {
  const made = world({ status: 200, body: { id: 'wid_1' } });
  t.is(
    await made.request('POST /dashboard/widgets manage', { name: 'Flange' }),
    '/dashboard/widgets/wid_1?done=created',
  );
  t.deepEqual(made.shown, []);
});
