import test from 'ava';
import { evolveOrganization, type Organization } from '../actors/organization.ts';
import { TEST_NETWORK } from '../chain-ingest/test-rail.ts';
import { renderCheckoutPreview } from './checkout-preview.ts';

const org = evolveOrganization(null, {
  type: 'OrganizationCreated',
  data: { id: 'org-1_test', environment: 'test', name: 'Corner <Coffee>', at: '2026-01-01T00:00:00.000Z' },
}) as Organization;
const now = Date.parse('2026-05-01T12:00:00.000Z');

test("the preview is the checkout page in the brand given (not the saved one), offering the environment's assets, with no script", (t) => {
  const html = renderCheckoutPreview({
    org: { ...org, brandColor: '#000000', brandLogo: null },
    brand: { brandColor: '#1166cc', brandLogo: 'https://cdn.example/logo.png' },
    environment: 'test',
    networks: [TEST_NETWORK],
    now,
  });
  t.regex(html, /<link rel="stylesheet" href="\/assets\/brand\/1166cc\.css">/);
  t.notRegex(html, /000000/);
  t.regex(html, /<img class="logo" src="https:\/\/cdn\.example\/logo\.png"/);
  t.regex(html, /Pay Corner &lt;Coffee&gt;/);
  t.regex(html, /Test mode/);
  for (const symbol of ['USDC', 'DAI', 'ETH']) t.regex(html, new RegExp(`asset-symbol">${symbol}<`));
  t.regex(html, /Sample item × 1/);
  t.notRegex(html, /<script/);
  // Framed in the dashboard, its banner and main are named apart from the dashboard's own (axe: landmark-unique).
  t.regex(html, /<header aria-label="Preview: business name">/);
  t.regex(html, /<main aria-label="Preview: checkout page">/);
});

test('without networks it still shows a sample asset; without a colour, the default one', (t) => {
  const html = renderCheckoutPreview({
    org,
    brand: { brandColor: null, brandLogo: null },
    environment: 'live',
    networks: [],
    now,
  });
  t.regex(html, /asset-symbol">USDC</);
  t.notRegex(html, /\/assets\/brand\/|class="logo"|Test mode/);
});
