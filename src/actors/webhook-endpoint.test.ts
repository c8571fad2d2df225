import test from 'ava';
import {
  evolveWebhookEndpoint,
  previousSecretExpiry,
  webhookEndpointAggregate,
  type WebhookEndpoint,
} from './webhook-endpoint.ts';

const created = evolveWebhookEndpoint(null, {
  type: 'WebhookEndpointCreated',
  data: {
    endpoint: {
      id: 'e1',
      organizationId: 'o1',
      environment: 'test',
      description: 'd',
      url: 'https://shop.example/hooks',
      sealedSecret: 'sealed-1',
      isDisabled: false,
      enabledEvents: { events: ['*'] },
      createdAt: '2026-06-01T10:00:00.000Z',
    },
  },
})!;

const regenerate = (endpoint: WebhookEndpoint, sealedSecret: string, keepPreviousForSeconds?: number) =>
  webhookEndpointAggregate
    .decide(
      endpoint,
      { type: 'RegenerateWebhookSecret', sealedSecret, keepPreviousForSeconds },
      { now: '2026-06-01T10:00:00.000Z' },
    )
    .reduce<WebhookEndpoint>((state, event) => evolveWebhookEndpoint(state, event)!, endpoint);

test('a regenerate that keeps the old secret records it sealed, with its expiry from the clock', (t) => {
  const rolled = regenerate(created, 'sealed-2', 3600);
  t.is(rolled.sealedSecret, 'sealed-2');
  t.is(rolled.previousSealedSecret, 'sealed-1');
  t.is(rolled.previousSecretExpiresAt, '2026-06-01T11:00:00.000Z');
  t.is(previousSecretExpiry(rolled, Date.parse('2026-06-01T10:59:59.999Z')), '2026-06-01T11:00:00.000Z');
  t.is(previousSecretExpiry(rolled, Date.parse('2026-06-01T11:00:00.000Z')), null, 'over at its expiry');
});

test('a regenerate without an overlap, or a second one, drops what an earlier one kept', (t) => {
  t.is(previousSecretExpiry(created, 0), null);
  const plain = regenerate(regenerate(created, 'sealed-2', 3600), 'sealed-3');
  t.is(plain.previousSealedSecret, null);
  t.is(previousSecretExpiry(plain, 0), null);
  const again = regenerate(regenerate(created, 'sealed-2', 3600), 'sealed-3', 60);
  t.is(again.previousSealedSecret, 'sealed-2', 'only the secret just replaced keeps signing');
});
