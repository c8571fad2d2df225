import type { DashboardContext } from '../../context.ts';
import { sendHtml } from '../../http.ts';
import { definePage } from '../../page.ts';
import { AppLayout } from '../../ui/layout.tsx';
import { ApiKeysCard, apiKeyRoutes, DEVELOPERS, type IssuedKey, type KeyForm, listApiKeys } from './api-keys.tsx';
import { DoneAlert } from './forms.tsx';
import { EndpointsCard, listEndpoints, webhookRoutes } from './webhooks.tsx';

/**
 * Developers: the environment's API keys (secrets shown once) and webhook endpoints, each with its
 * page (settings, signing secret, test event, delivery log with Resend). Every change goes through
 * `/api/v1` (api-keys.ts, webhook-endpoints.ts); developers, admins and owners only.
 */
export const page = definePage({
  screen: 'developers',
  routes(routes, deps) {
    const render = async (
      ctx: DashboardContext,
      extra: { issued?: IssuedKey; keyForm?: KeyForm } = {},
      status = 200,
    ) => {
      const { tenant } = ctx.state;
      const [keys, endpoints] = await Promise.all([listApiKeys(deps, tenant), listEndpoints(deps, tenant)]);
      await sendHtml(
        ctx,
        // Its own address: a key shown once after a form post is not created again by a reload.
        <AppLayout ctx={ctx} title="Developers" screen="developers" location={DEVELOPERS}>
          <DoneAlert
            ctx={ctx}
            messages={{ 'key-deleted': 'API key deleted.', 'endpoint-deleted': 'Webhook endpoint deleted.' }}
          />
          <ApiKeysCard ctx={ctx} keys={keys} issued={extra.issued} form={extra.keyForm} />
          <EndpointsCard endpoints={endpoints} />
        </AppLayout>,
        status,
      );
    };
    routes.get(DEVELOPERS, 'developers', (ctx) => render(ctx));
    apiKeyRoutes(routes, deps, render);
    webhookRoutes(routes, deps);
  },
});
