import type { DashboardContext } from '../context.ts';
import { AppLayout, AuthLayout } from './layout.tsx';

const TITLES: Record<number, string> = {
  400: 'That did not work',
  401: 'Signed out',
  403: 'Not allowed',
  404: 'Page not found',
  413: 'Too large',
  415: 'Not a form',
  429: 'Too many tries',
};

/** An error as a page: in the dashboard's frame for a signed-in user, in the sign-in frame otherwise. */
export function ErrorPage({ ctx, status, message }: { ctx: DashboardContext; status: number; message: string }) {
  const title = TITLES[status] ?? 'Something went wrong';
  const body = (
    <div class="card error-page">
      <p safe>{message}</p>
      <p>
        <a href={ctx.state.user ? '/dashboard' : '/dashboard/login'}>
          {ctx.state.user ? 'Back to the dashboard' : 'Sign in'}
        </a>
      </p>
    </div>
  );
  if (ctx.state.user && ctx.state.tenant)
    return (
      <AppLayout ctx={ctx} title={title}>
        {body}
      </AppLayout>
    );
  return (
    <AuthLayout title={title}>
      <h1 safe>{title}</h1>
      <p safe>{message}</p>
      <p>
        <a href="/dashboard/login">Sign in</a>
      </p>
    </AuthLayout>
  );
}
