import type { PriceSchema, ProductSchema } from '../../../read-api/schema/catalog.ts';
import type { z } from '../../../read-api/schema/fields.ts';
import { apiFor } from '../../api.ts';
import { readList, readOne } from '../../api-reads.ts';
import { can } from '../../auth/roles.ts';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import { definePage } from '../../page.ts';
import { Alert, Badge, Card, CsrfField, DateTime, EmptyState, Field, TableScroll } from '../../ui/components.tsx';
import {
  type FormErrors,
  formErrorsOf,
  refusalMessage,
  TextAreaField,
  textOf,
  valuesOf,
} from '../../ui/form-parts.tsx';
import { currenciesOf, decimalsHint, decimalsIn } from '../../ui/currency-field.tsx';
import { AppLayout, NewButton } from '../../ui/layout.tsx';
import { priceLabel } from '../../ui/price-label.ts';
import { PriceFields, priceBodyOf, priceInputOf } from './price-fields.tsx';
import { DoneAlert } from '../developers/forms.tsx';
import { type Built, createRoutes, type NewForm } from '../../create-routes.ts';

type Product = z.output<typeof ProductSchema>;
type Price = z.output<typeof PriceSchema>;

const BASE = '/dashboard/products';

const FormAlert = ({ errors }: { errors: FormErrors }) =>
  errors.form ? (
    <Alert tone="danger">
      <span safe>{errors.form}</span>
    </Alert>
  ) : (
    ''
  );

const productInputOf = (field: string) =>
  ['name', 'description', 'unitLabel', 'url'].includes(field) ? field : priceInputOf(field);

function ProductList({ products, timeZone }: { products: Product[]; timeZone: string }): JSX.Element {
  return (
    <Card title="Catalog" id="products">
      {products.length === 0 ? (
        <EmptyState message="No products yet." hint="Products and their prices are what invoices and links sell." />
      ) : (
        <TableScroll label="Products with their price and status">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th class="amount">Default price</th>
                <th>Status</th>
                <th class="hide-narrow">Created</th>
              </tr>
            </thead>
            <tbody>
              {products.map((p) => (
                <tr>
                  <td>
                    <a href={`${BASE}/${p.id}`} safe>
                      {p.name}
                    </a>
                  </td>
                  <td class="amount" safe>
                    {priceLabel(p.defaultPrice)}
                  </td>
                  <td>
                    {p.isActive ? <Badge tone="success" label="Active" /> : <Badge tone="neutral" label="Archived" />}
                  </td>
                  <td class="hide-narrow nowrap">
                    <DateTime iso={p.createdAt} timeZone={timeZone} />
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

/** The create body: the product, and its first price when an amount is typed (`decimalsOf`: see `priceBodyOf`). */
function productBodyOf(form: URLSearchParams, decimalsOf: (currency: string) => number | null): Built {
  const body: Record<string, unknown> = { name: form.get('name')?.trim() ?? '' };
  const description = textOf(form, 'description');
  if (description) body.description = description;
  if (textOf(form, 'unitAmount') === null) return { body };
  const price = priceBodyOf(form, decimalsOf);
  return 'errors' in price ? price : { body: { ...body, defaultPriceData: price.body } };
}

async function renderNew(ctx: DashboardContext, deps: DashboardDeps, { values, errors, status }: NewForm) {
  await sendHtml(
    ctx,
    <AppLayout ctx={ctx} title="New product" screen="products">
      <Card>
        <form method="post" action={BASE} novalidate>
          <CsrfField token={ctx.state.csrfToken} />
          <FormAlert errors={errors} />
          <Field name="name" label="Name" value={values.name} error={errors.name} />
          <TextAreaField name="description" label="Description" value={values.description} error={errors.description} />
          <fieldset>
            <legend>Price</legend>
            <PriceFields
              values={values}
              errors={errors}
              currencies={currenciesOf(ctx, deps)}
              decimalsHint={decimalsHint(ctx, deps, currenciesOf(ctx, deps))}
            />
          </fieldset>
          <div class="form-actions">
            <button type="submit" class="button-primary">
              Create product
            </button>
            <a class="button-secondary" href={BASE}>
              Cancel
            </a>
          </div>
        </form>
      </Card>
    </AppLayout>,
    status,
  );
}

type DetailForms = {
  /** Why an action on the product was refused. */
  notice?: string;
  edit?: { values: Record<string, string>; errors: FormErrors };
  price?: { values: Record<string, string>; errors: FormErrors };
};

/** What a product's page says after a change made from it (`?done=`), as the settings pages do. */
const DONE = {
  created: 'Product created.',
  saved: 'Product saved.',
  'price-added': 'Price added.',
  archived: 'Product archived.',
  activated: 'Product activated.',
};

async function renderDetail(
  ctx: DashboardContext,
  deps: DashboardDeps,
  id: string,
  forms: DetailForms = {},
  status = 200,
) {
  const api = apiFor(ctx, deps);
  const product = await readOne<Product>(api, `/api/v1/products/${encodeURIComponent(id)}`, 'product', id);
  const prices = await readList<Price>(api, `/api/v1/prices?productId=${encodeURIComponent(product.id)}&limit=200`);
  const manage = can(ctx.state.user.role, 'manage');
  const edit = forms.edit ?? {
    values: {
      name: product.name,
      description: product.description ?? '',
      unitLabel: product.unitLabel ?? '',
      url: product.url ?? '',
    },
    errors: {},
  };
  const price = forms.price ?? { values: {}, errors: {} };
  await sendHtml(
    ctx,
    <AppLayout
      ctx={ctx}
      title={product.name}
      screen="products"
      actions={
        <>
          {manage ? (
            <form method="post" action={`${BASE}/${product.id}/${product.isActive ? 'archive' : 'activate'}`}>
              <CsrfField token={ctx.state.csrfToken} />
              <button type="submit" class="button-secondary">
                {product.isActive ? 'Archive' : 'Activate'}
              </button>
            </form>
          ) : (
            ''
          )}
          <a class="button-secondary" href={BASE}>
            All products
          </a>
        </>
      }
    >
      <DoneAlert ctx={ctx} messages={DONE} />
      {forms.notice ? (
        <Alert tone="danger">
          <span safe>{forms.notice}</span>
        </Alert>
      ) : (
        ''
      )}
      {product.isActive ? '' : <Alert tone="info">Archived: it cannot be added to new invoices or links.</Alert>}
      <Card title="Prices" id="prices">
        {prices.length === 0 ? (
          <EmptyState message="No prices yet." />
        ) : (
          <TableScroll label="Prices of this product">
            <table>
              <thead>
                <tr>
                  <th class="amount">Price</th>
                  <th>Type</th>
                  <th>Status</th>
                  <th class="hide-narrow">Created</th>
                </tr>
              </thead>
              <tbody>
                {prices.map((p) => (
                  <tr>
                    <td class="amount" safe>
                      {priceLabel(p)}
                    </td>
                    <td>
                      {p.type === 'recurring' ? 'Recurring' : 'One time'}
                      {p.id === product.defaultPriceId ? (
                        <>
                          {' '}
                          <Badge tone="info" label="Default" />
                        </>
                      ) : (
                        ''
                      )}
                    </td>
                    <td>
                      {p.isActive ? <Badge tone="success" label="Active" /> : <Badge tone="neutral" label="Inactive" />}
                    </td>
                    <td class="hide-narrow nowrap">
                      <DateTime iso={p.createdAt} timeZone={ctx.state.timeZone} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
        )}
      </Card>
      {manage ? (
        <div class="grid grid-2">
          <Card title="Details" id="edit-product">
            <form method="post" action={`${BASE}/${product.id}`} novalidate>
              <CsrfField token={ctx.state.csrfToken} />
              <FormAlert errors={edit.errors} />
              <Field name="name" label="Name" value={edit.values.name} error={edit.errors.name} />
              <TextAreaField
                name="description"
                label="Description"
                value={edit.values.description}
                error={edit.errors.description}
              />
              <Field
                name="unitLabel"
                label="Unit label"
                value={edit.values.unitLabel}
                error={edit.errors.unitLabel}
                hint="e.g. seat, kg"
              />
              <Field name="url" label="Product page" type="url" value={edit.values.url} error={edit.errors.url} />
              <button type="submit" class="button-primary">
                Save
              </button>
            </form>
          </Card>
          <Card title="Add a price" id="add-price">
            <form method="post" action={`${BASE}/${product.id}/prices`} novalidate>
              <CsrfField token={ctx.state.csrfToken} />
              <FormAlert errors={price.errors} />
              <PriceFields
                values={price.values}
                errors={price.errors}
                currencies={currenciesOf(ctx, deps)}
                decimalsHint={decimalsHint(ctx, deps, currenciesOf(ctx, deps))}
              />
              <button type="submit" class="button-primary">
                Add price
              </button>
            </form>
          </Card>
        </div>
      ) : (
        ''
      )}
    </AppLayout>,
    status,
  );
}

/** Products and prices: the catalog, a new product with its price, edit, archive, and more prices. */
export const page = definePage({
  screen: 'products',
  routes(routes, deps) {
    routes.get(BASE, 'read', async (ctx) => {
      const products = await readList<Product>(apiFor(ctx, deps), '/api/v1/products?limit=200');
      await sendHtml(
        ctx,
        <AppLayout
          ctx={ctx}
          title="Products"
          screen="products"
          actions={<NewButton ctx={ctx} href={`${BASE}/new`} label="New product" />}
        >
          <ProductList products={products} timeZone={ctx.state.timeZone} />
        </AppLayout>,
      );
    });

    createRoutes(routes, deps, {
      base: BASE,
      apiPath: '/api/v1/products',
      build: (form, ctx) => productBodyOf(form, (currency) => decimalsIn(ctx, deps, currency)),
      inputOf: productInputOf,
      show: (ctx, form) => renderNew(ctx, deps, form),
    });

    routes.get(`${BASE}/:id`, 'read', (ctx) => renderDetail(ctx, deps, ctx.params.id!));

    routes.post(`${BASE}/:id`, 'manage', async (ctx) => {
      const api = apiFor(ctx, deps);
      const { form } = ctx.state;
      const id = ctx.params.id!;
      const body = {
        name: form.get('name')?.trim() ?? '',
        description: textOf(form, 'description'),
        unitLabel: textOf(form, 'unitLabel'),
        url: textOf(form, 'url'),
      };
      const answer = await api('PUT', `/api/v1/products/${encodeURIComponent(id)}`, body);
      if (answer.status >= 400)
        return renderDetail(
          ctx,
          deps,
          id,
          { edit: { values: valuesOf(form), errors: formErrorsOf(answer, productInputOf) } },
          answer.status,
        );
      redirectTo(ctx, `${BASE}/${id}?done=saved`);
    });

    routes.post(`${BASE}/:id/prices`, 'manage', async (ctx) => {
      const api = apiFor(ctx, deps);
      const { form } = ctx.state;
      const id = ctx.params.id!;
      const built = priceBodyOf(form, (currency) => decimalsIn(ctx, deps, currency));
      const answer = 'errors' in built ? null : await api('POST', '/api/v1/prices', { productId: id, ...built.body });
      const errors =
        'errors' in built ? built.errors : answer && answer.status >= 400 ? formErrorsOf(answer, priceInputOf) : null;
      if (errors)
        return renderDetail(ctx, deps, id, { price: { values: valuesOf(form), errors } }, answer?.status ?? 400);
      redirectTo(ctx, `${BASE}/${id}?done=price-added`);
    });

    for (const [action, call] of [
      ['archive', 'deactivate'],
      ['activate', 'activate'],
    ] as const) {
      routes.post(`${BASE}/:id/${action}`, 'manage', async (ctx) => {
        const api = apiFor(ctx, deps);
        const id = ctx.params.id!;
        const answer = await api('POST', `/api/v1/products/${encodeURIComponent(id)}/${call}`);
        if (answer.status >= 400) return renderDetail(ctx, deps, id, { notice: refusalMessage(answer) }, answer.status);
        redirectTo(ctx, `${BASE}/${id}?done=${action === 'archive' ? 'archived' : 'activated'}`);
      });
    }
  },
});
