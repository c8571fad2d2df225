import { randomUUID } from 'node:crypto';
import { createMerchant, sessionRequest } from './weir-harness.ts';

/** One hosted answer: where, and what it should answer (`form`: a POST of that form, as a browser sends it). */
/** A pay-what-you-want payment link with suggested amounts and bounds, as the hosted-page tests make it. */
export const SUPPORT_LINK = {
  title: 'Support the roastery',
  currency: 'usdc',
  suggestedAmounts: ['500000000', '1500000000'],
  minimumAmount: '100000000',
  maximumAmount: '10000000000',
  nameCollection: true,
};

export type HostedPage = {
  name: string;
  url: string;
  status: number;
  html: boolean;
  /** Shows the organization's branding (an unknown link has no organization). */
  branded?: boolean;
  form?: Record<string, string>;
};

/**
 * One of every hosted page a payer can meet, with the data behind it: the checkout page (brand
 * colour and logo, promotion codes, cancel), its status, an unknown session, a payment link page
 * with suggested amounts, its form refused, an unknown and an inactive link, an invoice's pay page
 * once paid and once voided, and an unknown invoice. `logoUrl`: where the brand logo is served.
 */
export async function everyHostedPage(baseUrl: string, logoUrl: string) {
  const { api } = await createMerchant(baseUrl, 'Corner <Coffee>');
  const ok = <T>(r: { status: number; body: T }, what: string): T => {
    if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  ok(await api.put('/api/v1/organization/brand', { brandColor: '#8a2be2', brandLogo: logoUrl }), 'brand');
  const session = ok(
    await api.post<{ id: string; url: string }>('/api/v1/checkout/sessions', {
      ...sessionRequest(),
      allowPromotionCodes: true,
    }),
    'session',
  );
  const link = ok(await api.post<{ id: string; url: string }>('/api/v1/payment-links', SUPPORT_LINK), 'payment link');
  const inactive = ok(
    await api.post<{ id: string; url: string }>('/api/v1/payment-links', {
      title: 'Sold out',
      amount: '100000000',
      currency: 'usdc',
    }),
    'payment link',
  );
  ok(await api.put(`/api/v1/payment-links/${inactive.id}/deactivate`, {}), 'deactivate');
  const customer = ok(await api.post<{ id: string }>('/api/v1/customers', { email: 'payer@example.com' }), 'customer');
  const invoice = async (then: 'pay' | 'void') => {
    const draft = ok(
      await api.post<{ id: string }>('/api/v1/invoices', {
        customerId: customer.id,
        lineItems: {
          data: [{ priceData: { currency: 'usdc', unitAmount: '100000000', productData: { name: 'Hour' } } }],
        },
      }),
      'invoice',
    );
    ok(await api.post(`/api/v1/invoices/${draft.id}/finalize`), 'finalize');
    ok(await api.post(`/api/v1/invoices/${draft.id}/${then}`), then);
    return `${baseUrl}/invoices/${draft.id}/pay`;
  };
  const pages: HostedPage[] = [
    { name: 'checkout page', url: session.url, status: 200, html: true },
    { name: 'checkout status', url: `${session.url}/status`, status: 200, html: false },
    {
      name: 'unknown checkout session',
      url: `${baseUrl}/checkout/${randomUUID()}`,
      status: 404,
      html: true,
      branded: false,
    },
    { name: 'payment link page', url: link.url, status: 200, html: true },
    { name: 'payment link form refused', url: link.url, status: 400, html: true, form: { amount: '250', name: '' } },
    { name: 'unknown payment link', url: `${baseUrl}/pay/${randomUUID()}`, status: 404, html: true, branded: false },
    { name: 'inactive payment link', url: inactive.url, status: 410, html: true },
    { name: 'paid invoice', url: await invoice('pay'), status: 200, html: true },
    { name: 'voided invoice', url: await invoice('void'), status: 410, html: true },
    {
      name: 'unknown invoice',
      url: `${baseUrl}/invoices/${randomUUID()}/pay`,
      status: 404,
      html: true,
      branded: false,
    },
  ];
  return { pages, session, link };
}
