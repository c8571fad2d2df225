import { API_KEY_SCOPES, type ApiKeyScope } from '../../../actors/api-key.ts';
import { COLLECTIONS, type ApiKeyDoc } from '../../../projections/collections.ts';
import { publicApiKey } from '../../../projections/public-views.ts';
import { createApiKeyUsage } from '../../../read-api/api-key-usage.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { apiFor } from '../../api.ts';
import { reauthenticate, ReauthFields } from '../../auth/reauth.tsx';
import type { DashboardContext, DashboardDeps, DashboardTenant } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import type { PageRoutes } from '../../page.ts';
import { Alert, Card, CsrfField, DateTime, EmptyState, Field, TableScroll } from '../../ui/components.tsx';
import { SecretShownOnce } from '../../ui/copy.tsx';
import { SelectField } from '../../ui/form-parts.tsx';
import { ConfirmPage, errorsOf, type FormErrors } from './forms.tsx';

export type ApiKeyRow = ReturnType<typeof publicApiKey> & { lastUsedAt: string | null };
/** A secret just made: shown in this answer only, never stored in a readable form. */
export type IssuedKey = ApiKeyRow & { secretKey: string; regenerated: boolean };
export type KeyForm = { name: string; scope: string; errors: FormErrors };

/** A scope's name, in the table and on the create form, and what it allows (the API's words). */
const SCOPES: Record<ApiKeyScope, { label: string; allows: string }> = {
  full: { label: 'Full', allows: 'everything' },
  read: { label: 'Read', allows: 'GET requests only' },
  audit: { label: 'Audit', allows: 'reading plus /api/v1/audit' },
};
const SCOPE_OPTIONS = API_KEY_SCOPES.map((scope) => ({ value: scope, label: SCOPES[scope].label }));
// Said under the select rather than in its options: a long option widens the select past a phone's width.
const SCOPE_HINT = `${API_KEY_SCOPES.map((scope) => `${SCOPES[scope].label}: ${SCOPES[scope].allows}`).join('. ')}.`;

export const DEVELOPERS = '/dashboard/developers';

export async function listApiKeys(deps: DashboardDeps, tenant: DashboardTenant): Promise<ApiKeyRow[]> {
  const docs = await deps.readStore
    .collection<ApiKeyDoc>(COLLECTIONS.apiKeys)
    .find({ ...tenant, deleted: false }, { sort: { createdAt: -1 } });
  return withLastUse(deps, docs);
}

/** Keys as the page shows them, each with when it last authenticated a request (null: not yet). */
async function withLastUse(deps: DashboardDeps, docs: ApiKeyDoc[]): Promise<ApiKeyRow[]> {
  const lastUsed = await createApiKeyUsage(deps.readStore, deps.clock).lastUsed(docs.map((doc) => doc.id));
  return docs.map((doc) => ({ ...publicApiKey(doc), lastUsedAt: lastUsed.get(doc.id) ?? null }));
}

function IssuedSecret({ issued }: { issued: IssuedKey }): JSX.Element {
  return (
    <SecretShownOnce
      id="secret-key"
      label="Secret key"
      value={issued.secretKey}
      hint="Send it as Authorization: Bearer <key> to /api/v1."
    >
      <strong safe>{`${issued.regenerated ? 'New secret for' : 'Created'} “${issued.name}”.`}</strong> Copy it now: it
      is shown this once and Weir keeps only its hash.
      {issued.regenerated ? ' The old secret no longer works.' : ''}
    </SecretShownOnce>
  );
}

/** The API keys card: the new secret (once), the keys with their actions, and the create form. */
export function ApiKeysCard(props: {
  ctx: DashboardContext;
  keys: ApiKeyRow[];
  issued?: IssuedKey;
  form?: KeyForm;
}): JSX.Element {
  const { ctx, keys, issued } = props;
  const form = props.form ?? { name: '', scope: 'full', errors: {} };
  return (
    <Card title="API keys" id="api-keys">
      {issued ? <IssuedSecret issued={issued} /> : ''}
      {keys.length === 0 ? (
        <EmptyState
          message={`No ${ctx.state.tenant.environment} keys.`}
          hint="Create one to call the API from your server."
        />
      ) : (
        <TableScroll label="API keys">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Key</th>
                <th>Scope</th>
                <th class="hide-narrow">Created</th>
                <th>Last used</th>
                <th>
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((key) => (
                <tr>
                  <td safe>{key.name}</td>
                  <td>
                    <code safe>{key.maskedKey}</code>
                  </td>
                  <td safe>{SCOPES[key.scope].label}</td>
                  <td class="hide-narrow nowrap">
                    <DateTime iso={key.createdAt} timeZone={ctx.state.timeZone} />
                  </td>
                  <td class="nowrap">
                    {key.lastUsedAt ? <DateTime iso={key.lastUsedAt} timeZone={ctx.state.timeZone} /> : 'Never'}
                  </td>
                  <td class="row-actions">
                    <form method="post" action={`${DEVELOPERS}/api-keys/${key.id}/regenerate`}>
                      <CsrfField token={ctx.state.csrfToken} />
                      <button type="submit" class="button-quiet" aria-label={`Regenerate ${key.name}`}>
                        Regenerate
                      </button>
                    </form>
                    <a
                      class="button-quiet danger-link"
                      href={`${DEVELOPERS}/api-keys/${key.id}/delete`}
                      aria-label={`Delete ${key.name}`}
                    >
                      Delete
                    </a>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
      <form method="post" action={`${DEVELOPERS}/api-keys`} class="form-section" id="create-key">
        <h3>Create a key</h3>
        {form.errors.form ? (
          <Alert tone="danger">
            <span safe>{form.errors.form}</span>
          </Alert>
        ) : (
          ''
        )}
        <CsrfField token={ctx.state.csrfToken} />
        <div class="form-row">
          <Field
            name="name"
            label="Key name"
            value={form.name}
            error={form.errors.name}
            hint="Say where it is used, e.g. shop backend."
          />
          <SelectField
            name="scope"
            label="Scope"
            options={SCOPE_OPTIONS}
            value={form.scope}
            error={form.errors.scope}
            hint={SCOPE_HINT}
          />
          <ReauthFields user={ctx.state.user} />
        </div>
        <button type="submit" class="button-primary">
          Create key
        </button>
      </form>
    </Card>
  );
}

/**
 * API keys through `/api/v1/api-keys`: create and regenerate ask for the password again (a new
 * secret is as good as the account's data) and show the secret once; delete is confirmed first.
 */
export function apiKeyRoutes(
  routes: PageRoutes,
  deps: DashboardDeps,
  render: (ctx: DashboardContext, extra: { issued?: IssuedKey; keyForm?: KeyForm }, status?: number) => Promise<void>,
): void {
  const loadKey = async (ctx: DashboardContext): Promise<ApiKeyRow> => {
    const doc = await deps.readStore.collection<ApiKeyDoc>(COLLECTIONS.apiKeys).get(ctx.params.id!);
    const { organizationId, environment } = ctx.state.tenant;
    if (!doc || doc.deleted || doc.organizationId !== organizationId || doc.environment !== environment)
      throw new NotFoundError('API key', ctx.params.id!);
    return (await withLastUse(deps, [doc]))[0]!;
  };

  routes.post(`${DEVELOPERS}/api-keys`, 'developers', async (ctx) => {
    if (!(await reauthenticate(ctx, deps, 'create an API key'))) return;
    const name = (ctx.state.form.get('name') ?? '').trim();
    // The API checks the scope (an unknown one is a 400 at the field); a form without one asks for full, its default.
    const scope = ctx.state.form.get('scope') ?? 'full';
    const answer = await apiFor(ctx, deps)<IssuedKey>('POST', '/api/v1/api-keys', {
      ...(name ? { name } : {}),
      scope,
    });
    if (answer.status >= 400)
      return render(
        ctx,
        { keyForm: { name, scope, errors: errorsOf(answer, { name: 'name', scope: 'scope' }) } },
        answer.status,
      );
    await render(ctx, { issued: { ...answer.body, regenerated: false } });
  });

  routes.post(`${DEVELOPERS}/api-keys/:id/regenerate`, 'developers', async (ctx) => {
    const key = await loadKey(ctx);
    if (!(await reauthenticate(ctx, deps, `regenerate the key “${key.name}”`))) return;
    const answer = await apiFor(ctx, deps)<IssuedKey>('POST', `/api/v1/api-keys/${key.id}/regenerate`);
    if (answer.status >= 400)
      return render(ctx, { keyForm: { name: '', scope: 'full', errors: errorsOf(answer, {}) } }, answer.status);
    await render(ctx, { issued: { ...answer.body, regenerated: true } });
  });

  routes.get(`${DEVELOPERS}/api-keys/:id/delete`, 'developers', async (ctx) => {
    const key = await loadKey(ctx);
    await sendHtml(
      ctx,
      <ConfirmPage
        ctx={ctx}
        title="Delete API key"
        message={`Delete “${key.name}” (${key.maskedKey})? Requests made with it are refused at once. This cannot be undone.`}
        action={`${DEVELOPERS}/api-keys/${key.id}/delete`}
        button="Delete key"
        back={DEVELOPERS}
      />,
    );
  });

  routes.post(`${DEVELOPERS}/api-keys/:id/delete`, 'developers', async (ctx) => {
    const key = await loadKey(ctx);
    const answer = await apiFor(ctx, deps)('DELETE', `/api/v1/api-keys/${key.id}`);
    if (answer.status >= 400)
      return render(ctx, { keyForm: { name: '', scope: 'full', errors: errorsOf(answer, {}) } }, answer.status);
    redirectTo(ctx, `${DEVELOPERS}?done=key-deleted`);
  });
}
