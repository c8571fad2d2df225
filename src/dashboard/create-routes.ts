import { apiFor } from './api.ts';
import type { DashboardContext, DashboardDeps } from './context.ts';
import { redirectTo } from './http.ts';
import type { PageRoutes } from './page.ts';
import { type FormErrors, formErrorsOf, valuesOf } from './ui/form-parts.tsx';

/** A create form as a page shows it: the values as typed, what was refused, and the answer's status. */
export type NewForm = { values: Record<string, string>; errors: FormErrors; status: number };

/** A form's API body, or its own refusals at their inputs before anything is sent. */
export type Built = { body: Record<string, unknown> } | { errors: FormErrors };

/**
 * The create routes of a record's pages: GET `<base>/new` shows the form blank; POST `<base>` builds
 * the API body (`build`: its refusals shown at once, with 400), posts it to `apiPath` through the
 * API's own route, and shows the form again as typed with the API's refusal at its input
 * (`inputOf`), or goes to the record made, which says so (`?done=created`, shown by its page's `DoneAlert`).
 */
export function createRoutes(
  routes: PageRoutes,
  deps: Pick<DashboardDeps, 'api'>,
  spec: {
    base: string;
    apiPath: string;
    /** The body of `form`; `ctx` for what the request carries (the dashboard's zone, for a date typed in it). */
    build: (form: URLSearchParams, ctx: DashboardContext) => Built;
    inputOf: (field: string) => string | undefined;
    show: (ctx: DashboardContext, form: NewForm) => Promise<void>;
  },
): void {
  routes.get(`${spec.base}/new`, 'manage', (ctx) => spec.show(ctx, { values: {}, errors: {}, status: 200 }));
  routes.post(spec.base, 'manage', async (ctx) => {
    const { form } = ctx.state;
    const built = spec.build(form, ctx);
    if ('errors' in built) return spec.show(ctx, { values: valuesOf(form), errors: built.errors, status: 400 });
    const answer = await apiFor(ctx, deps)<{ id: string }>('POST', spec.apiPath, built.body);
    if (answer.status >= 400)
      return spec.show(ctx, {
        values: valuesOf(form),
        errors: formErrorsOf(answer, spec.inputOf),
        status: answer.status,
      });
    redirectTo(ctx, `${spec.base}/${encodeURIComponent(answer.body.id)}?done=created`);
  });
}
