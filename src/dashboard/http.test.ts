import test from 'ava';
import { environmentReturnPath, safeReturnPath } from './http.ts';

test('a return path stays inside the dashboard: another site, a protocol-relative or odd path goes home', (t) => {
  t.is(safeReturnPath('/dashboard/invoices?status=open'), '/dashboard/invoices?status=open');
  t.is(safeReturnPath('/dashboard'), '/dashboard');
  for (const bad of [
    null,
    '',
    'https://evil.example/',
    '//evil.example',
    '/dashboard//evil',
    '/dashboardx',
    '/api/v1',
    '/dashboard/\\evil',
  ])
    t.is(safeReturnPath(bad), '/dashboard', String(bad));
});

test("the test/live switch comes back to the page, but from a record's page (an id in its path) to its section's list: the record is of the other environment", (t) => {
  const id = '0386c8a2-716b-40d8-9da6-da6022d06f63';
  t.is(environmentReturnPath('/dashboard/invoices?status=open'), '/dashboard/invoices?status=open');
  t.is(environmentReturnPath('/dashboard/settings/branding'), '/dashboard/settings/branding');
  t.is(environmentReturnPath(`/dashboard/invoices/${id}`), '/dashboard/invoices');
  t.is(environmentReturnPath(`/dashboard/invoices/${id}/edit?x=1`), '/dashboard/invoices');
  t.is(environmentReturnPath(`/dashboard/subscriptions/${id}?done=cancel`), '/dashboard/subscriptions');
  t.is(environmentReturnPath(`/dashboard/settings/payment-methods/${id}/edit`), '/dashboard/settings/payment-methods');
  t.is(environmentReturnPath(`/dashboard/developers/webhooks/${id}`), '/dashboard/developers');
  t.is(environmentReturnPath(`/dashboard/developers/api-keys/${id}/delete`), '/dashboard/developers');
  t.is(environmentReturnPath('https://evil.example/'), '/dashboard');
});
