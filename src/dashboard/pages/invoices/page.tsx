import {
  CATALOG_LISTED,
  PRICES,
  PRODUCTS,
  type PriceDoc,
  type ProductDoc,
} from '../../../projections/catalog.projection.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { isUuid } from '../../../shared/ids.ts';
import { apiFor, type PageApi } from '../../api.ts';
import { can } from '../../auth/roles.ts';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import { definePage } from '../../page.ts';
import { money } from '../../ui/components.tsx';
import { currenciesOf, decimalsHint, decimalsIn } from '../../ui/currency-field.tsx';
import { pageOf, statusFilterOf, withQuery } from '../../ui/list-controls.tsx';
import { payableNetworks } from '../../../actors/line-items.ts';
import { TAX_RATES, type TaxRateDoc } from '../../../actors/tax-rate.ts';
import { type EditorChoices, InvoiceEditor } from './editor.tsx';
import {
  blankInvoiceForm,
  type FormErrors,
  type InvoiceForm,
  inputOfField,
  invoiceFormOf,
  invoiceRequest,
  messageOf,
  readInvoiceForm,
  withAnotherRow,
} from './invoice-form.ts';
import { INVOICE_STATUSES, InvoiceDetailPage, type InvoiceList, InvoiceListPage, type InvoiceView } from './views.tsx';

const PAGE_SIZE = 20;
const LIST = '/dashboard/invoices';
/** A customer id no customer has: a body sent with it is checked in full, then refused at its customer, so nothing is written. */
const NO_CUSTOMER = '00000000-0000-4000-8000-000000000000';

type ApiError = { message: string };
const errorMessage = (body: unknown): string => (body as ApiError | null)?.message ?? 'the request was refused';

/** What each action is called in the API, and what the page says once it is done. */
const ACTIONS: Record<string, { api: string; done: string }> = {
  finalize: { api: 'finalize', done: 'finalized' },
  send: { api: 'send', done: 'sent' },
  pay: { api: 'pay', done: 'paid' },
  void: { api: 'void', done: 'voided' },
  'mark-uncollectible': { api: 'mark-uncollectible', done: 'uncollectible' },
  duplicate: { api: 'duplicate', done: 'duplicated' },
  delete: { api: '', done: 'deleted' },
};
const NOTICES: Record<string, string> = {
  created: 'Draft saved.',
  saved: 'Draft saved.',
  finalized: 'Invoice finalized: its page and pay link are live.',
  sent: 'Invoice sent.',
  paid: 'Invoice marked paid.',
  voided: 'Invoice voided.',
  uncollectible: 'Invoice marked uncollectible.',
  duplicated: 'A new draft was made from the invoice.',
  deleted: 'Draft deleted.',
};

/** What the page says once `done`: a finalized renewal was also sent, as Weir mails renewals, and says so. */
export const noticeOf = (done: string, invoice: Pick<InvoiceView, 'sentAt'>): string | null =>
  done === 'finalized' && invoice.sentAt
    ? 'Invoice finalized and mailed to its customer: its page and pay link are live.'
    : (NOTICES[done] ?? null);

/** Every network, `payable` where a wallet of the merchant's is on it: a session of the invoice offers no other. */
function networkChoices(deps: DashboardDeps, ctx: DashboardContext): EditorChoices['networks'] {
  const { environment } = ctx.state.tenant;
  const payable = new Set(
    payableNetworks(deps.rail, environment, ctx.state.organization?.withdrawalAddresses ?? []).map((n) => n.chainId),
  );
  return deps.rail
    .networks(environment)
    .map((n) => ({ value: String(n.chainId), label: n.name, payable: payable.has(n.chainId) }));
}

/**
 * The prices a form's lines hold that the editor's list leaves out (deactivated since, or past its
 * first 200), each marked when inactive: without its option, the line would be drawn "Ad hoc" and
 * dropped on save.
 */
async function heldPrices(deps: DashboardDeps, ctx: DashboardContext, form: InvoiceForm, listed: Set<string>) {
  const { tenant } = ctx.state;
  const ids = [...new Set(form.lines.map((l) => l.price).filter((id) => id !== '' && !listed.has(id)))];
  const found = await Promise.all(ids.map((id) => deps.readStore.collection<PriceDoc>(PRICES).get(id)));
  const prices = found.filter(
    (p): p is PriceDoc =>
      p !== null && p.organizationId === tenant.organizationId && p.environment === tenant.environment,
  );
  return Promise.all(
    prices.map(async (p) => {
      const product = await deps.readStore.collection<ProductDoc>(PRODUCTS).get(p.productId);
      const active = p.isActive && product?.isActive === true;
      return {
        value: p.id,
        label: `${product?.name ?? 'Product'} · ${money(p.unitAmount, p.currency)}${active ? '' : ' (inactive)'}`,
      };
    }),
  );
}

/** The form's customer when the editor's list (its first 200) leaves it out, so saving keeps it. */
async function heldCustomer(api: PageApi, id: string): Promise<{ id: string; email: string; name: string | null }[]> {
  const answer = await api<{ id: string; email: string; name: string | null }>('GET', `/api/v1/customers/${id}`);
  return answer.status === 200 ? [answer.body] : [];
}

async function editorChoices(
  deps: DashboardDeps,
  ctx: DashboardContext,
  api: PageApi,
  form: InvoiceForm,
): Promise<EditorChoices> {
  const { tenant } = ctx.state;
  const [customers, prices, products, taxRates] = await Promise.all([
    api<{ data: { id: string; email: string; name: string | null }[] }>('GET', '/api/v1/customers?limit=200'),
    deps.readStore
      .collection<PriceDoc>(PRICES)
      .find(
        { ...tenant, isActive: true, type: 'one_time', ...CATALOG_LISTED },
        { sort: { createdAt: -1 }, limit: 200 },
      ),
    deps.readStore
      .collection<ProductDoc>(PRODUCTS)
      .find({ ...tenant, isActive: true, deleted: false, ...CATALOG_LISTED }),
    // Inactive ones too: a draft's line may hold a rate deactivated since.
    deps.readStore.collection<TaxRateDoc>(TAX_RATES).find({ ...tenant }),
  ]);
  const names = new Map(products.map((p) => [p.id, p.name]));
  const listed = prices
    .filter((p) => names.has(p.productId))
    .map((p) => ({ value: p.id, label: `${names.get(p.productId)} · ${money(p.unitAmount, p.currency)}` }));
  const listedCustomers = customers.body?.data ?? [];
  const customerListed = form.customerId === '' || listedCustomers.some((c) => c.id === form.customerId);
  return {
    customers: [...listedCustomers, ...(customerListed ? [] : await heldCustomer(api, form.customerId))].map((c) => ({
      value: c.id,
      label: c.name ? `${c.name} (${c.email})` : c.email,
    })),
    prices: [...listed, ...(await heldPrices(deps, ctx, form, new Set(listed.map((p) => p.value))))],
    currencies: currenciesOf(ctx, deps),
    decimalsHint: decimalsHint(ctx, deps, currenciesOf(ctx, deps)),
    networks: networkChoices(deps, ctx),
    taxRates: new Map(
      taxRates.map((r) => [r.id, `${r.name} ${r.percentage}%${r.isActive ? '' : ' (inactive)'}`] as const),
    ),
  };
}

type Saved = { ok: true; invoice: InvoiceView } | { ok: false; status: number; errors: FormErrors };

/** An API refusal as the form's errors: at the input its field names, else above the form. */
function refusal(answer: { status: number; body: unknown; field?: string }, rows: readonly number[]): Saved {
  const input = inputOfField(answer.field, rows);
  return {
    ok: false,
    status: answer.status >= 500 ? 502 : answer.status,
    errors: { [input]: messageOf(errorMessage(answer.body), answer.field) },
  };
}

/**
 * The form saved through the API: a create (`invoiceId` null) or an update. A new customer typed
 * by email is made only once the rest of the body has passed the API's checks (sent first with a
 * customer no one has), and an existing customer with that email is reused.
 */
async function save(
  api: PageApi,
  form: InvoiceForm,
  invoiceId: string | null,
  decimals: number | null,
): Promise<Saved> {
  const built = invoiceRequest(form, invoiceId ? 'update' : 'create', decimals);
  if (!built.ok) return { ok: false, status: 400, errors: built.errors };
  const { body, rows } = built.request;
  const send = (customerId: string | undefined) =>
    api<InvoiceView>(invoiceId ? 'PUT' : 'POST', invoiceId ? `/api/v1/invoices/${invoiceId}` : '/api/v1/invoices', {
      ...body,
      ...(customerId ? { customerId } : {}),
    });
  if (form.customerId && form.customerEmail)
    return {
      ok: false,
      status: 400,
      errors: { customerEmail: 'pick a customer or type a new one’s email, not both' },
    };
  let customerId = form.customerId;
  if (!customerId && !form.customerEmail)
    return {
      ok: false,
      status: 400,
      errors: { customerId: "is required: pick a customer or type a new customer's email" },
    };
  if (!customerId) {
    const found = await api<{ data: { id: string }[] }>(
      'GET',
      `/api/v1/customers?limit=1&email=${encodeURIComponent(form.customerEmail)}`,
    );
    customerId = found.status === 200 ? (found.body.data[0]?.id ?? '') : '';
  }
  if (!customerId) {
    const probe = await send(NO_CUSTOMER);
    if (!(probe.status === 400 && probe.field === 'customerId')) return refusal(probe, rows);
    const created = await api<{ id: string }>('POST', '/api/v1/customers', { email: form.customerEmail });
    if (created.status !== 200)
      return {
        ok: false,
        status: created.status,
        errors: { customerEmail: messageOf(errorMessage(created.body), created.field) },
      };
    customerId = created.body.id;
  }
  const answer = await send(customerId);
  return answer.status === 200 ? { ok: true, invoice: answer.body } : refusal(answer, rows);
}

async function loadInvoice(api: PageApi, id: string): Promise<InvoiceView> {
  const answer = isUuid(id) ? await api<InvoiceView>('GET', `/api/v1/invoices/${id}`) : null;
  if (!answer || answer.status !== 200) throw new NotFoundError('invoice', id);
  return answer.body;
}

/**
 * Invoices: the list (by status, a page at a time), the draft editor (new and edit), the invoice
 * with its actions (finalize, send, mark paid, mark uncollectible, void, duplicate, delete a
 * draft) and links to its hosted page and PDF. Every change is the API's own route, as this user.
 */
export const page = definePage({
  screen: 'invoices',
  routes(routes, deps) {
    const showEditor = async (
      ctx: DashboardContext,
      input: { form: InvoiceForm; errors?: FormErrors; status?: number; invoice?: InvoiceView },
    ) => {
      const api = apiFor(ctx, deps);
      const { invoice } = input;
      await sendHtml(
        ctx,
        <InvoiceEditor
          ctx={ctx}
          title={invoice ? `Edit invoice ${invoice.number}` : 'New invoice'}
          action={invoice ? `${LIST}/${invoice.id}/edit` : `${LIST}/new`}
          cancel={invoice ? `${LIST}/${invoice.id}` : LIST}
          form={input.form}
          errors={input.errors ?? {}}
          choices={await editorChoices(deps, ctx, api, input.form)}
        />,
        input.status ?? 200,
      );
    };

    const showDetail = async (
      ctx: DashboardContext,
      invoice: InvoiceView,
      options: { status?: number; error?: { message: string; field: 'to' | null } } = {},
    ) => {
      const done = typeof ctx.query.done === 'string' ? ctx.query.done : '';
      await sendHtml(
        ctx,
        <InvoiceDetailPage
          ctx={ctx}
          invoice={invoice}
          canManage={can(ctx.state.user.role, 'manage')}
          pdfUrl={`${deps.publicUrl}/invoices/${invoice.id}/pdf`}
          networks={new Map(deps.rail.networks(ctx.state.tenant.environment).map((n) => [n.chainId, n.name]))}
          notice={options.error ? null : noticeOf(done, invoice)}
          error={options.error ?? null}
        />,
        options.status ?? 200,
      );
    };

    routes.get(LIST, 'read', async (ctx) => {
      const { status, error } = statusFilterOf(ctx.query, INVOICE_STATUSES, 'invoices');
      const page = pageOf(ctx.query.page);
      const answer = await apiFor(ctx, deps)<InvoiceList>(
        'GET',
        withQuery('/api/v1/invoices', { status, page, limit: PAGE_SIZE }),
      );
      const list = answer.status === 200 ? answer.body : { page: 1, limit: PAGE_SIZE, count: 0, data: [] };
      await sendHtml(
        ctx,
        <InvoiceListPage
          ctx={ctx}
          list={list}
          status={status}
          statusError={error}
          canManage={can(ctx.state.user.role, 'manage')}
          notice={ctx.query.done === 'deleted' ? NOTICES.deleted! : null}
        />,
        error ? 400 : 200,
      );
    });

    // The first currency offered (USDC where a wallet receives it), as the product and link forms choose it.
    routes.get(`${LIST}/new`, 'manage', (ctx) =>
      showEditor(ctx, {
        form: blankInvoiceForm(currenciesOf(ctx, deps)[0] ?? 'usdc'),
      }),
    );

    routes.post(`${LIST}/new`, 'manage', async (ctx) => {
      const form = readInvoiceForm(ctx.state.form);
      if (ctx.state.form.get('intent') === 'add-line') return showEditor(ctx, { form: withAnotherRow(form) });
      const saved = await save(apiFor(ctx, deps), form, null, decimalsIn(ctx, deps, form.currency));
      if (!saved.ok) return showEditor(ctx, { form, errors: saved.errors, status: saved.status });
      redirectTo(ctx, `${LIST}/${saved.invoice.id}?done=created`);
    });

    routes.get(`${LIST}/:id`, 'read', async (ctx) => {
      await showDetail(ctx, await loadInvoice(apiFor(ctx, deps), ctx.params.id!));
    });

    routes.get(`${LIST}/:id/edit`, 'manage', async (ctx) => {
      const invoice = await loadInvoice(apiFor(ctx, deps), ctx.params.id!);
      if (invoice.status !== 'draft') return redirectTo(ctx, `${LIST}/${invoice.id}`);
      await showEditor(ctx, { form: invoiceFormOf(invoice, deps.clock.now()), invoice });
    });

    routes.post(`${LIST}/:id/edit`, 'manage', async (ctx) => {
      const api = apiFor(ctx, deps);
      const invoice = await loadInvoice(api, ctx.params.id!);
      const form = readInvoiceForm(ctx.state.form);
      if (ctx.state.form.get('intent') === 'add-line') return showEditor(ctx, { form: withAnotherRow(form), invoice });
      const saved = await save(api, form, invoice.id, decimalsIn(ctx, deps, form.currency));
      if (!saved.ok) return showEditor(ctx, { form, errors: saved.errors, status: saved.status, invoice });
      redirectTo(ctx, `${LIST}/${invoice.id}?done=saved`);
    });

    routes.post(`${LIST}/:id/:action`, 'manage', async (ctx) => {
      const api = apiFor(ctx, deps);
      const action = ACTIONS[ctx.params.action!];
      const invoice = await loadInvoice(api, ctx.params.id!);
      if (!action) throw new NotFoundError('invoice action', ctx.params.action!);
      const to = ctx.state.form.get('to')?.trim();
      const answer =
        action.api === ''
          ? await api('DELETE', `/api/v1/invoices/${invoice.id}`)
          : await api<InvoiceView>(
              'POST',
              `/api/v1/invoices/${invoice.id}/${action.api}`,
              action.api === 'send' && to ? { to } : undefined,
            );
      if (answer.status !== 200)
        return showDetail(ctx, await loadInvoice(api, invoice.id), {
          status: answer.status >= 500 ? 502 : answer.status,
          error: {
            message: messageOf(
              errorMessage(answer.body),
              answer.field,
              action.api === 'finalize' || action.api === 'send' ? action.api : undefined,
              new Map(deps.rail.networks(ctx.state.tenant.environment).map((n) => [n.chainId, n.name])),
            ),
            field: answer.field === 'to' ? 'to' : null,
          },
        });
      if (action.api === '') return redirectTo(ctx, `${LIST}?done=deleted`);
      const target = action.api === 'duplicate' ? (answer.body as InvoiceView).id : invoice.id;
      redirectTo(ctx, `${LIST}/${target}?done=${action.done}`);
    });
  },
});
