import type { CustomerSchema } from '../../read-api/schema/customer.ts';
import type { z } from '../../read-api/schema/fields.ts';
import { apiFor, type PageApi } from '../api.ts';
import { readList, readOne } from '../api-reads.ts';
import { can } from '../auth/roles.ts';
import type { DashboardContext } from '../context.ts';
import { redirectTo, sendHtml } from '../http.ts';
import { definePage } from '../page.ts';
import { Alert, Card, CsrfField, DateTime, EmptyState, Field, money, TableScroll } from '../ui/components.tsx';
import { type FormErrors, formErrorsOf, refusalMessage, textOf, valuesOf } from '../ui/form-parts.tsx';
import { AppLayout, NewButton } from '../ui/layout.tsx';
import { Related, type RelatedSession, RelatedSessions } from '../ui/related-records.tsx';
import { createRoutes, type NewForm } from '../create-routes.ts';
import { DoneAlert } from './developers/forms.tsx';
import { INVOICE_STATUSES, type InvoiceView } from './invoices/views.tsx';
import { everyLabel } from './subscriptions/cadence.ts';
import { SUBSCRIPTION_STATUSES, type SubscriptionStatus } from './subscriptions/statuses.ts';

type Customer = z.output<typeof CustomerSchema>;
/** The parts of a customer's sessions, invoices and subscriptions the detail shows. */
type Row = { id: string; currency: string; createdAt: string };
type InvoiceRow = Row & { status: InvoiceView['status']; number: string | null; amountDue: string };
type SubscriptionRow = Row & {
  status: SubscriptionStatus;
  amountTotal: string;
  interval: string;
  intervalCount: number;
};

const BASE = '/dashboard/customers';
const ADDRESS = [
  ['line1', 'Address line 1'],
  ['line2', 'Address line 2'],
  ['city', 'City'],
  ['state', 'State or region'],
  ['postalCode', 'Postal code'],
  ['country', 'Country (two letters)'],
] as const;
const TEXTS = ['email', 'name', 'phone', 'organizationName', 'customerReferenceId'] as const;

/** The customer body of the form; an empty text clears its field, an empty address is none. */
function customerBodyOf(form: URLSearchParams): Record<string, unknown> {
  const body: Record<string, unknown> = Object.fromEntries(TEXTS.map((name) => [name, textOf(form, name)]));
  body.email = form.get('email')?.trim() ?? '';
  const address = Object.fromEntries(ADDRESS.map(([part]) => [part, textOf(form, `address_${part}`)]));
  body.address = Object.values(address).some((v) => v !== null) ? address : null;
  return body;
}

/** `address.country` → `address_country`; the other paths are the inputs' own names. */
const customerInputOf = (field: string): string | undefined => {
  if (field.startsWith('address.')) return `address_${field.slice('address.'.length)}`;
  return (TEXTS as readonly string[]).includes(field) ? field : undefined;
};

const valuesOfCustomer = (c: Customer): Record<string, string> => ({
  email: c.email,
  name: c.name ?? '',
  phone: c.phone ?? '',
  organizationName: c.organizationName ?? '',
  customerReferenceId: c.customerReferenceId ?? '',
  ...Object.fromEntries(ADDRESS.map(([part]) => [`address_${part}`, c.address?.[part] ?? ''])),
});

function CustomerForm(props: {
  csrf: string;
  action: string;
  values: Record<string, string>;
  errors: FormErrors;
  submit: string;
}): JSX.Element {
  const { values: v, errors: e } = props;
  return (
    <form method="post" action={props.action} novalidate>
      <CsrfField token={props.csrf} />
      {e.form ? (
        <Alert tone="danger">
          <span safe>{e.form}</span>
        </Alert>
      ) : (
        ''
      )}
      <div class="form-row">
        <Field name="email" label="Email" type="email" value={v.email} error={e.email} />
        <Field name="name" label="Name" value={v.name} error={e.name} />
      </div>
      <div class="form-row">
        <Field name="phone" label="Phone" type="tel" value={v.phone} error={e.phone} />
        <Field name="organizationName" label="Company" value={v.organizationName} error={e.organizationName} />
      </div>
      <Field
        name="customerReferenceId"
        label="Your reference"
        value={v.customerReferenceId}
        error={e.customerReferenceId}
        hint="Your own id for this customer, e.g. from your CRM."
      />
      <fieldset>
        <legend>Billing address</legend>
        <div class="form-row">
          {ADDRESS.map(([part, label]) => (
            <Field name={`address_${part}`} label={label} value={v[`address_${part}`]} error={e[`address_${part}`]} />
          ))}
        </div>
      </fieldset>
      <div class="form-actions">
        <button type="submit" class="button-primary" safe>
          {props.submit}
        </button>
      </div>
    </form>
  );
}

function CustomerList({
  customers,
  email,
  timeZone,
}: {
  customers: Customer[];
  email: string;
  timeZone: string;
}): JSX.Element {
  return (
    <Card title="All customers" id="customers">
      <form method="get" action={BASE} class="search-form" role="search">
        <Field name="email" label="Find by email" type="search" value={email} />
        <button type="submit" class="button-secondary">
          Search
        </button>
        {email ? (
          <a class="button-quiet" href={BASE}>
            Clear
          </a>
        ) : (
          ''
        )}
      </form>
      {customers.length === 0 ? (
        <EmptyState
          message={email ? 'No customer has that email address.' : 'No customers yet.'}
          hint={email ? undefined : 'Customers are made at checkout, by invoices, or here.'}
        />
      ) : (
        <TableScroll label="Customers with their email and name">
          <table>
            <thead>
              <tr>
                <th>Email</th>
                <th class="hide-narrow">Name</th>
                <th class="hide-narrow">Number</th>
                <th>Created</th>
              </tr>
            </thead>
            <tbody>
              {customers.map((c) => (
                <tr>
                  <td>
                    <a href={`${BASE}/${c.id}`} safe>
                      {c.email}
                    </a>
                  </td>
                  <td class="hide-narrow" safe>
                    {c.name ?? '—'}
                  </td>
                  <td class="hide-narrow">
                    <code safe>{c.customerNumber}</code>
                  </td>
                  <td class="nowrap">
                    <DateTime iso={c.createdAt} timeZone={timeZone} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </Card>
  );
}

async function renderDetail(
  ctx: DashboardContext,
  api: PageApi,
  id: string,
  edit?: { values: Record<string, string>; errors: FormErrors },
  status = 200,
) {
  const customer = await readOne<Customer>(api, `/api/v1/customers/${encodeURIComponent(id)}`, 'customer', id);
  const of = `customerId=${encodeURIComponent(customer.id)}&limit=20`;
  const [sessions, invoices, subscriptions] = await Promise.all([
    readList<RelatedSession>(api, `/api/v1/checkout/sessions?${of}`),
    readList<InvoiceRow>(api, `/api/v1/invoices?${of}`),
    readList<SubscriptionRow>(api, `/api/v1/subscriptions?${of}`),
  ]);
  const manage = can(ctx.state.user.role, 'manage');
  const form = edit ?? { values: valuesOfCustomer(customer), errors: {} };
  await sendHtml(
    ctx,
    <AppLayout
      ctx={ctx}
      title={customer.name ?? customer.email}
      screen="customers"
      actions={
        <a class="button-secondary" href={BASE}>
          All customers
        </a>
      }
    >
      <DoneAlert ctx={ctx} messages={{ created: 'Customer created.', saved: 'Customer saved.' }} />
      <RelatedSessions sessions={sessions} id="customer-sessions" timeZone={ctx.state.timeZone} />
      <Related
        timeZone={ctx.state.timeZone}
        title="Invoices"
        id="customer-invoices"
        noun="Invoice"
        rows={invoices.map((i) => ({
          ...i,
          href: `/dashboard/invoices/${encodeURIComponent(i.id)}`,
          what: money(i.amountDue, i.currency),
          status: INVOICE_STATUSES[i.status],
        }))}
      />
      <Related
        timeZone={ctx.state.timeZone}
        title="Subscriptions"
        id="customer-subscriptions"
        noun="Subscription"
        rows={subscriptions.map((s) => ({
          ...s,
          href: `/dashboard/subscriptions/${encodeURIComponent(s.id)}`,
          what: `${money(s.amountTotal, s.currency)} ${everyLabel(s)}`,
          status: SUBSCRIPTION_STATUSES[s.status],
        }))}
      />
      {manage ? (
        <>
          <Card title="Details" id="edit-customer">
            <CustomerForm
              csrf={ctx.state.csrfToken}
              action={`${BASE}/${customer.id}`}
              values={form.values}
              errors={form.errors}
              submit="Save"
            />
          </Card>
          <Card title="Delete customer" id="delete-customer">
            <p class="muted">Their sessions, invoices and subscriptions stay; the customer record goes.</p>
            <form method="post" action={`${BASE}/${customer.id}/delete`}>
              <CsrfField token={ctx.state.csrfToken} />
              <button type="submit" class="button-danger">
                Delete customer
              </button>
            </form>
          </Card>
        </>
      ) : (
        ''
      )}
    </AppLayout>,
    status,
  );
}

async function renderNew(ctx: DashboardContext, { values, errors, status }: NewForm) {
  await sendHtml(
    ctx,
    <AppLayout ctx={ctx} title="New customer" screen="customers">
      <Card>
        <CustomerForm
          csrf={ctx.state.csrfToken}
          action={BASE}
          values={values}
          errors={errors}
          submit="Create customer"
        />
      </Card>
    </AppLayout>,
    status,
  );
}

/** Customers: search by email, create, edit, delete, and a customer's sessions, invoices and subscriptions. */
export const page = definePage({
  screen: 'customers',
  routes(routes, deps) {
    routes.get(BASE, 'read', async (ctx) => {
      const email = typeof ctx.query.email === 'string' ? ctx.query.email.trim() : '';
      const query = email ? `&email=${encodeURIComponent(email)}` : '';
      const customers = await readList<Customer>(apiFor(ctx, deps), `/api/v1/customers?limit=200${query}`);
      await sendHtml(
        ctx,
        <AppLayout
          ctx={ctx}
          title="Customers"
          screen="customers"
          actions={<NewButton ctx={ctx} href={`${BASE}/new`} label="New customer" />}
        >
          <DoneAlert ctx={ctx} messages={{ deleted: 'Customer deleted.' }} />
          <CustomerList customers={customers} email={email} timeZone={ctx.state.timeZone} />
        </AppLayout>,
      );
    });

    createRoutes(routes, deps, {
      base: BASE,
      apiPath: '/api/v1/customers',
      // A new customer has nothing to clear: empty fields are left out.
      build: (form) => ({
        body: Object.fromEntries(Object.entries(customerBodyOf(form)).filter(([, v]) => v !== null)),
      }),
      inputOf: customerInputOf,
      show: renderNew,
    });

    routes.get(`${BASE}/:id`, 'read', (ctx) => renderDetail(ctx, apiFor(ctx, deps), ctx.params.id!));

    routes.post(`${BASE}/:id`, 'manage', async (ctx) => {
      const api = apiFor(ctx, deps);
      const id = ctx.params.id!;
      const { form } = ctx.state;
      const answer = await api('PUT', `/api/v1/customers/${encodeURIComponent(id)}`, customerBodyOf(form));
      if (answer.status >= 400)
        return renderDetail(
          ctx,
          api,
          id,
          { values: valuesOf(form), errors: formErrorsOf(answer, customerInputOf) },
          answer.status,
        );
      redirectTo(ctx, `${BASE}/${id}?done=saved`);
    });

    routes.post(`${BASE}/:id/delete`, 'manage', async (ctx) => {
      const api = apiFor(ctx, deps);
      const id = ctx.params.id!;
      const answer = await api('DELETE', `/api/v1/customers/${encodeURIComponent(id)}`);
      if (answer.status >= 400) {
        const customer = await readOne<Customer>(api, `/api/v1/customers/${encodeURIComponent(id)}`, 'customer', id);
        return renderDetail(
          ctx,
          api,
          id,
          { values: valuesOfCustomer(customer), errors: { form: refusalMessage(answer) } },
          answer.status,
        );
      }
      redirectTo(ctx, `${BASE}?done=deleted`);
    });
  },
});
