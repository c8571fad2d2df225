import test from 'ava';
import { safeReturnPath } from './http.ts';

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
