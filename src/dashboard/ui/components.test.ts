import test from 'ava';
import { DateTime, dateTimeIn, paymentAmountOf } from './components.tsx';

// 03:30Z on 1 December is still 30 November in New York (UTC-5 then).
const NEAR_MIDNIGHT = '2026-12-01T03:30:00.000Z';

test('dateTimeIn: UTC by default, labelled UTC, as the dashboard always showed it', (t) => {
  t.deepEqual(dateTimeIn(NEAR_MIDNIGHT), { when: '1 Dec, 03:30', zone: 'UTC' });
  t.deepEqual(dateTimeIn(NEAR_MIDNIGHT, 'UTC'), { when: '1 Dec, 03:30', zone: 'UTC' });
});

test("dateTimeIn: a chosen zone's day and time, and its short name at that moment (daylight saving included)", (t) => {
  t.deepEqual(dateTimeIn(NEAR_MIDNIGHT, 'America/New_York'), { when: '30 Nov, 22:30', zone: 'GMT-5' });
  t.deepEqual(dateTimeIn('2026-07-01T03:30:00.000Z', 'America/New_York'), { when: '30 Jun, 23:30', zone: 'GMT-4' });
  t.deepEqual(dateTimeIn(NEAR_MIDNIGHT, 'Asia/Kolkata'), { when: '1 Dec, 09:00', zone: 'GMT+5:30' });
});

test('DateTime: the instant stays the ISO value of the <time>; the text and the zone are those of the chosen zone', async (t) => {
  const html = await DateTime({ iso: NEAR_MIDNIGHT, timeZone: 'America/New_York' });
  t.is(
    html,
    '<time datetime="2026-12-01T03:30:00.000Z"><span>30 Nov, 22:30</span><span class="tz"> GMT-5</span></time>',
  );
  t.is(
    await DateTime({ iso: NEAR_MIDNIGHT, timeZone: 'UTC' }),
    '<time datetime="2026-12-01T03:30:00.000Z"><span>1 Dec, 03:30</span><span class="tz"> UTC</span></time>',
  );
});

test("paymentAmountOf: a payment's 10^8 amount as money writes it; dust that scale reads as 0 shows its exact amount in the asset's decimals, never 0.00", (t) => {
  const usdc18 = { decimals: 18 };
  t.is(paymentAmountOf({ amount: '300000000', amountRaw: '3000000', asset: { decimals: 6 } }, 'usdc'), '3.00 USDC');
  t.is(paymentAmountOf({ amount: '0', amountRaw: '1', asset: usdc18 }, 'usdc'), '0.000000000000000001 USDC');
  t.is(paymentAmountOf({ amount: '0', amountRaw: '4500000000', asset: usdc18 }, 'USDC'), '0.0000000045 USDC');
  // Nothing known of its asset (a sweep of several): the 10^8 amount, as before.
  t.is(paymentAmountOf({ amount: '0', amountRaw: null, asset: null }, 'usdc'), '0.00 USDC');
});
