import type { OrganizationSchema } from '../../../read-api/schema/organization.ts';
import type { z } from '../../../read-api/schema/fields.ts';
import { apiFor } from '../../api.ts';
import { readOne } from '../../api-reads.ts';
import type { DashboardContext, DashboardDeps } from '../../context.ts';
import { redirectTo, sendHtml } from '../../http.ts';
import type { PageRoutes } from '../../page.ts';
import { Card, Field } from '../../ui/components.tsx';
import { type FormErrors, formErrorsOf, textOf, valuesOf } from '../../ui/form-parts.tsx';
import { DoneAlert } from '../developers/forms.tsx';
import { SECTIONS, SettingsForm, SettingsLayout } from './frame.tsx';

export type Organization = z.output<typeof OrganizationSchema>;

const BASE = SECTIONS.business.path;

type Detail = keyof Pick<
  Organization,
  | 'email'
  | 'phone'
  | 'supportEmail'
  | 'supportPhone'
  | 'websiteUrl'
  | 'supportUrl'
  | 'privacyUrl'
  | 'termsUrl'
  | 'companyIdentificationNumber'
  | 'taxIdentificationNumber'
>;

/** The business details but the name, in groups, each as [field, label, input type, hint]: all may be left empty. */
const GROUPS: readonly (readonly [string, readonly (readonly [Detail, string, string, string])[]])[] = [
  [
    'Contact',
    [
      ['email', 'Business email', 'email', ''],
      ['phone', 'Phone', 'tel', ''],
      ['supportEmail', 'Support email', 'email', 'Shown to payers instead of the business email.'],
      ['supportPhone', 'Support phone', 'tel', 'Shown to payers instead of the phone.'],
    ],
  ],
  [
    'Web pages',
    [
      ['websiteUrl', 'Website', 'url', 'A full address: https://…'],
      ['supportUrl', 'Support website', 'url', ''],
      ['privacyUrl', 'Privacy policy', 'url', ''],
      ['termsUrl', 'Terms of service', 'url', ''],
    ],
  ],
  [
    'Registration',
    [
      ['companyIdentificationNumber', 'Company number', 'text', ''],
      ['taxIdentificationNumber', 'Tax number', 'text', 'VAT or other tax id.'],
    ],
  ],
];
const DETAILS = GROUPS.flatMap(([, fields]) => fields);

const ADDRESS = [
  ['line1', 'Address line 1'],
  ['line2', 'Address line 2'],
  ['city', 'City'],
  ['state', 'State or region'],
  ['postalCode', 'Postal code'],
  ['country', 'Country'],
] as const;

/** Every field of the form, so an emptied one clears its detail (null) and the name is always sent. */
function bodyOf(form: URLSearchParams): Record<string, unknown> {
  return {
    name: (form.get('name') ?? '').trim(),
    ...Object.fromEntries(DETAILS.map(([field]) => [field, textOf(form, field)])),
    addressDetails: Object.fromEntries(ADDRESS.map(([part]) => [part, textOf(form, `address_${part}`)])),
  };
}

/** `addressDetails.city` → `address_city`; the other paths are the inputs' own names. */
const inputOf = (field: string): string | undefined => {
  if (field.startsWith('addressDetails.')) return `address_${field.slice('addressDetails.'.length)}`;
  return field === 'name' || DETAILS.some(([name]) => name === field) ? field : undefined;
};

const valuesOfOrganization = (org: Organization): Record<string, string> => {
  const address = org.addressDetails as Record<string, unknown>;
  return {
    name: org.name,
    ...Object.fromEntries(DETAILS.map(([field]) => [field, org[field] ?? ''])),
    ...Object.fromEntries(
      ADDRESS.map(([part]) => [`address_${part}`, typeof address[part] === 'string' ? address[part] : '']),
    ),
  };
};

function BusinessPage(props: { ctx: DashboardContext; values: Record<string, string>; errors: FormErrors }) {
  const { ctx, values: v, errors: e } = props;
  return (
    <SettingsLayout ctx={ctx} section="business">
      <p class="lede">Shown on your checkout pages, invoices and receipts. Empty a field to remove it.</p>
      <DoneAlert ctx={ctx} messages={{ saved: 'Business details saved.' }} />
      <Card id="business-details" class="settings-form">
        <SettingsForm ctx={ctx} action={BASE} id="business-form" errors={e}>
          <Field name="name" label="Business name" value={v.name} error={e.name} required />
          {GROUPS.map(([legend, fields]) => (
            <fieldset>
              <legend safe>{legend}</legend>
              <div class="form-row">
                {fields.map(([field, label, type, hint]) => (
                  <Field
                    name={field}
                    label={label}
                    type={type}
                    value={v[field]}
                    error={e[field]}
                    hint={hint || undefined}
                  />
                ))}
              </div>
            </fieldset>
          ))}
          <fieldset>
            <legend>Address</legend>
            <div class="form-row">
              {ADDRESS.map(([part, label]) => (
                <Field
                  name={`address_${part}`}
                  label={label}
                  value={v[`address_${part}`]}
                  error={e[`address_${part}`]}
                />
              ))}
            </div>
          </fieldset>
          <button type="submit" class="button-primary">
            Save business details
          </button>
        </SettingsForm>
      </Card>
    </SettingsLayout>
  );
}

/** Business details through `PUT /api/v1/organization`: every field sent, an emptied one cleared. */
export function businessRoutes(routes: PageRoutes, deps: DashboardDeps): void {
  routes.get(BASE, 'read', async (ctx) => {
    const { organizationId } = ctx.state.tenant;
    const org = await readOne<Organization>(apiFor(ctx, deps), '/api/v1/organization', 'organization', organizationId);
    await sendHtml(ctx, <BusinessPage ctx={ctx} values={valuesOfOrganization(org)} errors={{}} />);
  });

  routes.post(BASE, 'manage', async (ctx) => {
    const { form } = ctx.state;
    const answer = await apiFor(ctx, deps)('PUT', '/api/v1/organization', bodyOf(form));
    if (answer.status >= 400)
      return sendHtml(
        ctx,
        <BusinessPage ctx={ctx} values={valuesOf(form)} errors={formErrorsOf(answer, inputOf)} />,
        answer.status,
      );
    redirectTo(ctx, `${BASE}?done=saved`);
  });
}
