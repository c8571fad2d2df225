import { reauthenticate } from '../../src/dashboard/auth/reauth.tsx';
import { redirectTo, sendHtml } from '../../src/dashboard/http.ts';
import { definePage } from '../../src/dashboard/page.ts';
import { CsrfField } from '../../src/dashboard/ui/components.tsx';
import { AppLayout } from '../../src/dashboard/ui/layout.tsx';

/** A screen that exists only in the sign-in tests: an admin action and a developer action that asks for the password again. */
export const guardedPage = definePage({
  routes(routes, deps) {
    routes.get('/dashboard/guarded', 'read', async (ctx) =>
      sendHtml(
        ctx,
        <AppLayout ctx={ctx} title="Guarded">
          <form method="post" action="/dashboard/guarded/admin">
            <CsrfField token={ctx.state.csrfToken} />
            <button type="submit">Admin action</button>
          </form>
          <form method="post" action="/dashboard/guarded/key">
            <CsrfField token={ctx.state.csrfToken} />
            <input type="hidden" name="keyName" value="CI deploys" />
            <button type="submit">Create key</button>
          </form>
        </AppLayout>,
      ),
    );
    routes.post('/dashboard/guarded/admin', 'manage', (ctx) => redirectTo(ctx, '/dashboard/guarded?done=admin'));
    routes.post('/dashboard/guarded/key', 'developers', async (ctx) => {
      if (!(await reauthenticate(ctx, deps, 'create an API key'))) return;
      redirectTo(ctx, `/dashboard/guarded?done=${encodeURIComponent(ctx.state.form.get('keyName') ?? '')}`);
    });
  },
});
