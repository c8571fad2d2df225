import test from 'ava';
import { IllegalEventError } from '../src/actors/aggregate.ts';
import { givenWhenThen } from '../src/actors/given-when-then.ts';
import { InvalidStateError, ValidationError } from '../src/shared/errors.ts';
import { paymentLinkAggregate } from './payment-link.aggregate.ts';
import type { NewPaymentLink, PaymentLinkCommand, PaymentLinkCommandType } from './payment-link.decide.ts';
import { paymentLinkMachine } from './payment-link.machine.ts';
import type { PaymentLinkCustomField, PaymentLinkEvent } from './payment-link.types.ts';

const given = givenWhenThen(paymentLinkAggregate);
const NOW = '2026-01-01T00:30:00.000Z';
const LATER = '2026-02-01T00:00:00.000Z';

const fixedLink = (over: Partial<NewPaymentLink> = {}): NewPaymentLink => ({
  id: 'a0000000-0000-4000-8000-000000000001',
  organizationId: 'org-1',
  environment: 'test',
  type: 'multiple',
  pricing: 'fixed',
  priceType: 'one_time',
  title: 'Concert ticket',
  description: null,
  image: null,
  tags: [],
  currency: 'usdc',
  amount: '2500000000',
  priceId: 'p0000000-0000-4000-8000-000000000001',
  productId: 'b0000000-0000-4000-8000-000000000001',
  interval: null,
  intervalCount: null,
  suggestedAmounts: [],
  minimumAmount: null,
  maximumAmount: null,
  nameCollection: false,
  emailCollection: true,
  phoneNumberCollection: false,
  billingAddressCollection: false,
  shippingAddressCollection: false,
  customFields: { fields: [] },
  submitType: 'pay',
  afterCompletion: 'hosted_confirmation',
  afterCompletionRedirectUrl: null,
  afterCompletionConfirmMsg: 'Thanks!',
  allowPromotionCodes: false,
  allowedChains: [],
  metadata: {},
  isActive: true,
  ...over,
});
const variableLink = (over: Partial<NewPaymentLink> = {}): NewPaymentLink =>
  fixedLink({
    pricing: 'variable',
    amount: null,
    priceId: null,
    suggestedAmounts: ['500000000', '1000000000'],
    minimumAmount: '100000000',
    maximumAmount: '10000000000',
    ...over,
  });
const subscriptionLink = (over: Partial<NewPaymentLink> = {}): NewPaymentLink =>
  fixedLink({ pricing: 'subscription', priceType: 'recurring', interval: 'month', intervalCount: 1, ...over });

const created = (over: Partial<NewPaymentLink> = {}): PaymentLinkEvent =>
  given([]).when({ type: 'CreatePaymentLink', link: fixedLink(over) }, NOW)[0]!;
const updated = (
  changes: Extract<PaymentLinkEvent, { type: 'PaymentLinkUpdated' }>['data']['changes'],
): PaymentLinkEvent => ({ type: 'PaymentLinkUpdated', data: { changes, at: LATER } });
const activated: PaymentLinkEvent = { type: 'PaymentLinkActivated', data: { at: LATER } };
const deactivated: PaymentLinkEvent = { type: 'PaymentLinkDeactivated', data: { at: LATER } };
const deleted: PaymentLinkEvent = { type: 'PaymentLinkDeleted', data: { at: LATER } };

// ---------------------------------------------------------------------------------------------
// Every (state, command) pair.

type State = 'new' | 'active' | 'inactive' | 'deleted';
const HISTORIES: Record<State, PaymentLinkEvent[]> = {
  new: [],
  active: [created()],
  inactive: [created(), deactivated],
  deleted: [created(), deleted],
};
const COMMANDS: Record<PaymentLinkCommandType, PaymentLinkCommand> = {
  CreatePaymentLink: { type: 'CreatePaymentLink', link: fixedLink() },
  UpdatePaymentLink: { type: 'UpdatePaymentLink', changes: { title: 'Backstage pass' } },
  ActivatePaymentLink: { type: 'ActivatePaymentLink' },
  DeactivatePaymentLink: { type: 'DeactivatePaymentLink' },
  DeletePaymentLink: { type: 'DeletePaymentLink' },
};
type Outcome = PaymentLinkEvent[] | { refused: string };
const TABLE: Record<State, Record<PaymentLinkCommandType, Outcome>> = {
  new: {
    CreatePaymentLink: [created()],
    UpdatePaymentLink: { refused: 'resource_missing' },
    ActivatePaymentLink: { refused: 'resource_missing' },
    DeactivatePaymentLink: { refused: 'resource_missing' },
    DeletePaymentLink: { refused: 'resource_missing' },
  },
  active: {
    CreatePaymentLink: [],
    UpdatePaymentLink: [updated({ title: 'Backstage pass' })],
    ActivatePaymentLink: [],
    DeactivatePaymentLink: [deactivated],
    DeletePaymentLink: [deleted],
  },
  inactive: {
    CreatePaymentLink: [],
    UpdatePaymentLink: [updated({ title: 'Backstage pass' })],
    ActivatePaymentLink: [activated],
    DeactivatePaymentLink: [],
    DeletePaymentLink: [deleted],
  },
  deleted: {
    CreatePaymentLink: [],
    UpdatePaymentLink: { refused: 'payment_link_deleted' },
    ActivatePaymentLink: { refused: 'payment_link_deleted' },
    DeactivatePaymentLink: { refused: 'payment_link_deleted' },
    DeletePaymentLink: [],
  },
};
const NEXT_STATE: Record<State, Partial<Record<PaymentLinkCommandType, State>>> = {
  new: { CreatePaymentLink: 'active' },
  active: { UpdatePaymentLink: 'active', DeactivatePaymentLink: 'inactive', DeletePaymentLink: 'deleted' },
  inactive: { UpdatePaymentLink: 'inactive', ActivatePaymentLink: 'active', DeletePaymentLink: 'deleted' },
  deleted: {},
};

for (const [state, row] of Object.entries(TABLE) as [State, Record<PaymentLinkCommandType, Outcome>][]) {
  for (const [type, outcome] of Object.entries(row) as [PaymentLinkCommandType, Outcome][]) {
    const when = type === 'CreatePaymentLink' ? NOW : LATER;
    if ('refused' in outcome) {
      test(`given ${state}, when ${type}, then refused with ${outcome.refused}`, (t) => {
        const error = t.throws(() => given(HISTORIES[state]).when(COMMANDS[type], when), {
          instanceOf: InvalidStateError,
        });
        t.is(error.code, outcome.refused);
      });
    } else {
      test(`given ${state}, when ${type}, then ${outcome.length ? outcome.map((e) => e.type).join(', ') : 'nothing'}`, (t) => {
        const events = given(HISTORIES[state]).when(COMMANDS[type], when);
        t.deepEqual(events, outcome);
        t.is(given([...HISTORIES[state], ...events]).state().value, NEXT_STATE[state][type] ?? state);
      });
    }
  }
}

test('the table covers every state and every command', (t) => {
  t.deepEqual(Object.keys(TABLE).sort(), Object.keys(HISTORIES).sort());
  t.deepEqual(Object.keys(TABLE).sort(), Object.keys(paymentLinkMachine.config.states ?? {}).sort());
  for (const row of Object.values(TABLE)) t.deepEqual(Object.keys(row).sort(), Object.keys(COMMANDS).sort());
});

// --- state and data -------------------------------------------------------------------------

test('given nothing, when created, then the link is active with its times; isActive false starts it inactive', (t) => {
  const state = given([created()]).state();
  t.is(state.value, 'active');
  t.like(state.context.link, {
    isActive: true,
    deleted: false,
    deletedAt: null,
    createdAt: NOW,
    updatedAt: NOW,
    title: 'Concert ticket',
  });
  const off = given([created({ isActive: false })]).state();
  t.is(off.value, 'inactive');
  t.false(off.context.link!.isActive);
});

test('deactivate, activate and delete keep isActive, deleted and updatedAt in step', (t) => {
  t.like(given([created(), deactivated]).state().context.link, { isActive: false, updatedAt: LATER });
  t.like(given([created(), deactivated, activated]).state().context.link, { isActive: true });
  t.like(given([created(), deleted]).state().context.link, { isActive: false, deleted: true, deletedAt: LATER });
  t.like(given([created(), deactivated, deleted]).state().context.link, { deleted: true });
});

test('update records only what changed; an update that changes nothing records nothing', (t) => {
  const events = given([created()]).when(
    { type: 'UpdatePaymentLink', changes: { title: 'Concert ticket', description: 'Front row', tags: [] } },
    LATER,
  );
  t.deepEqual(events, [updated({ description: 'Front row' })]);
  t.is(given([created(), ...events]).state().context.link?.description, 'Front row');
  t.deepEqual(given([created()]).when({ type: 'UpdatePaymentLink', changes: { title: 'Concert ticket' } }, LATER), []);
});

test('an update is checked against the whole link it makes', (t) => {
  const redirectWithoutUrl = t.throws(
    () =>
      given([created()]).when(
        { type: 'UpdatePaymentLink', changes: { afterCompletion: 'redirect', afterCompletionConfirmMsg: null } },
        LATER,
      ),
    { instanceOf: ValidationError },
  );
  t.regex(redirectWithoutUrl.message, /^afterCompletionRedirectUrl: is required/);
  const suggested = t.throws(
    () => given([created()]).when({ type: 'UpdatePaymentLink', changes: { suggestedAmounts: ['100'] } }, LATER),
    { instanceOf: ValidationError },
  );
  t.regex(suggested.message, /^suggestedAmounts: is only for variable-price links/);
  const variable = given([]).when({ type: 'CreatePaymentLink', link: variableLink() }, NOW);
  const outOfBounds = t.throws(
    () => given(variable).when({ type: 'UpdatePaymentLink', changes: { maximumAmount: '700000000' } }, LATER),
    { instanceOf: ValidationError },
  );
  t.regex(outOfBounds.message, /^suggestedAmounts\[1\]: 10 USDC is above maximumAmount \(7 USDC\)/);
});

// --- the three kinds --------------------------------------------------------------------------

test('fixed, variable and subscription links are accepted with their own pricing', (t) => {
  for (const link of [
    fixedLink(),
    variableLink(),
    subscriptionLink(),
    variableLink({ suggestedAmounts: [], minimumAmount: null, maximumAmount: null }),
  ]) {
    t.is(given([]).when({ type: 'CreatePaymentLink', link }, NOW).length, 1, link.pricing);
  }
});

const text = (
  over: Partial<Extract<PaymentLinkCustomField, { type: 'text' }>['text']> = {},
): PaymentLinkCustomField => ({
  key: 'company',
  type: 'text',
  label: { type: 'custom', custom: 'Company' },
  optional: false,
  text: { minimumLength: null, maximumLength: null, ...over },
});
const numeric = (minimum: string | null, maximum: string | null): PaymentLinkCustomField => ({
  key: 'seats',
  type: 'numeric',
  label: { type: 'custom', custom: 'Seats' },
  optional: false,
  numeric: { minimum, maximum, minimumLength: null, maximumLength: null },
});
const dropdown = (options: { label: string; value: string }[]): PaymentLinkCustomField => ({
  key: 'size',
  type: 'dropdown',
  label: { type: 'custom', custom: 'Size' },
  optional: true,
  dropdown: { options },
});

test('when created with rules it breaks, then a validation error naming the field', (t) => {
  const cases: [NewPaymentLink, RegExp][] = [
    [fixedLink({ title: '  ' }), /^title: must not be empty/],
    [fixedLink({ amount: null }), /^amount: must be more than 0 for a fixed-price link/],
    [fixedLink({ amount: '0' }), /^amount: must be more than 0/],
    [fixedLink({ priceId: null }), /^priceId: is required for a fixed-price link/],
    [fixedLink({ priceType: 'recurring', interval: 'month' }), /^priceId: a fixed-price link needs a one-time price/],
    [
      subscriptionLink({ priceType: 'one_time', interval: null }),
      /^priceId: a subscription link needs a recurring price/,
    ],
    // Its page would turn every payer away: a subscription cannot bill by the week or the day.
    [
      subscriptionLink({ interval: 'week' }),
      /^priceId: a subscription is billed monthly, quarterly, half-yearly or annually \(interval month or year\), not by the week$/,
    ],
    [subscriptionLink({ interval: 'day', intervalCount: 3 }), /^priceId: a subscription is billed .*, not by the day$/],
    [variableLink({ amount: '100' }), /^amount: a variable-price link takes no amount/],
    [variableLink({ priceId: 'p-1' }), /^priceId: a variable-price link takes no price/],
    [fixedLink({ minimumAmount: '100' }), /^minimumAmount: is only for variable-price links/],
    [subscriptionLink({ maximumAmount: '100' }), /^maximumAmount: is only for variable-price links/],
    [
      subscriptionLink({ emailCollection: false }),
      /^emailCollection: a subscription link must collect the payer's email/,
    ],
    [variableLink({ minimumAmount: '0' }), /^minimumAmount: must be more than 0/],
    [
      variableLink({ minimumAmount: '300', maximumAmount: '200', suggestedAmounts: [] }),
      /^minimumAmount: must not be more than maximumAmount/,
    ],
    [variableLink({ suggestedAmounts: ['0'] }), /^suggestedAmounts\[0\]: must be more than 0/],
    [variableLink({ suggestedAmounts: ['500000000', '500000000'] }), /^suggestedAmounts\[1\]: repeats 5 USDC/],
    [
      variableLink({ suggestedAmounts: ['50000000'] }),
      /^suggestedAmounts\[0\]: 0\.5 USDC is below minimumAmount \(1 USDC\)/,
    ],
    [
      variableLink({ suggestedAmounts: ['500000000', '90000000000'], maximumAmount: '50000000000' }),
      /^suggestedAmounts\[1\]: 900 USDC is above maximumAmount \(500 USDC\)/,
    ],
    [
      variableLink({ suggestedAmounts: ['1', '2', '3', '4', '5', '6'], minimumAmount: null }),
      /^suggestedAmounts: must have at most 5 items/,
    ],
    [
      fixedLink({ afterCompletion: 'redirect', afterCompletionConfirmMsg: null }),
      /^afterCompletionRedirectUrl: is required when afterCompletion is redirect/,
    ],
    [
      fixedLink({ afterCompletion: 'redirect', afterCompletionRedirectUrl: 'https://shop.example/ok' }),
      /^afterCompletionConfirmMsg: is only for afterCompletion hosted_confirmation/,
    ],
    [
      fixedLink({ afterCompletionRedirectUrl: 'https://shop.example/ok' }),
      /^afterCompletionRedirectUrl: is only for afterCompletion redirect/,
    ],
    [
      fixedLink({ customFields: { fields: [text(), { ...text(), key: 'COMPANY' }] } }),
      /^customFields\.fields\[1\]\.key: repeats COMPANY/,
    ],
    [
      fixedLink({ customFields: { fields: [{ ...text(), key: 'no spaces' }] } }),
      /^customFields\.fields\[0\]\.key: must be 1 to 40 letters/,
    ],
    [
      fixedLink({ customFields: { fields: [{ ...text(), label: { type: 'custom', custom: ' ' } }] } }),
      /^customFields\.fields\[0\]\.label\.custom: must not be empty/,
    ],
    [
      fixedLink({ customFields: { fields: ['a', 'b', 'c', 'd', 'e', 'f'].map((key) => ({ ...text(), key })) } }),
      /^customFields\.fields: must have at most 5 items/,
    ],
    [
      fixedLink({ customFields: { fields: [text({ minimumLength: 5, maximumLength: 3 })] } }),
      /^customFields\.fields\[0\]\.text\.minimumLength: must not be more than maximumLength \(3\)/,
    ],
    [
      fixedLink({ customFields: { fields: [text({ maximumLength: 0 })] } }),
      /^customFields\.fields\[0\]\.text\.maximumLength: must be at least 1/,
    ],
    [
      fixedLink({ customFields: { fields: [text({ maximumLength: 256 })] } }),
      /^customFields\.fields\[0\]\.text\.maximumLength: must be an integer from 0 to 255/,
    ],
    [
      fixedLink({ customFields: { fields: [numeric('10.5', '2')] } }),
      /^customFields\.fields\[0\]\.numeric\.minimum: must not be more than maximum \(2\)/,
    ],
    [
      fixedLink({ customFields: { fields: [dropdown([])] } }),
      /^customFields\.fields\[0\]\.dropdown\.options: must have at least 1 item/,
    ],
    [
      fixedLink({
        customFields: {
          fields: [
            dropdown([
              { label: 'S', value: 's' },
              { label: 'Small', value: 's' },
            ]),
          ],
        },
      }),
      /^customFields\.fields\[0\]\.dropdown\.options\[1\]\.value: repeats s/,
    ],
    [
      fixedLink({ customFields: { fields: [dropdown([{ label: 'S', value: ' ' }])] } }),
      /^customFields\.fields\[0\]\.dropdown\.options\[0\]\.value: must not be empty/,
    ],
    [
      fixedLink({
        allowedChains: [
          { chainId: 1, isPreferred: false },
          { chainId: 1, isPreferred: false },
        ],
      }),
      /^allowedChains\[1\]\.chainId: repeats 1/,
    ],
    [
      fixedLink({
        allowedChains: [
          { chainId: 1, isPreferred: true },
          { chainId: 137, isPreferred: true },
        ],
      }),
      /^allowedChains: at most one chain can be preferred/,
    ],
  ];
  for (const [link, message] of cases) {
    const error = t.throws(
      () => given([]).when({ type: 'CreatePaymentLink', link }, NOW),
      { instanceOf: ValidationError },
      String(message),
    );
    t.regex(error.message, message);
  }
});

test('custom fields of every type within their rules are accepted', (t) => {
  const link = fixedLink({
    customFields: {
      fields: [
        text({ minimumLength: 2, maximumLength: 20 }),
        numeric('-1.5', '100'),
        dropdown([
          { label: 'Small', value: 's' },
          { label: 'Large', value: 'l' },
        ]),
      ],
    },
  });
  t.is(given([]).when({ type: 'CreatePaymentLink', link }, NOW).length, 1);
});

// --- the machine refuses facts the decider must never produce -------------------------------

test('the machine refuses events its state does not accept', (t) => {
  t.throws(() => given([deactivated]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([created(), created()]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([created(), activated]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([created(), deactivated, deactivated]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([created(), deleted, updated({ title: 'x' })]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([created(), deleted, activated]).state(), { instanceOf: IllegalEventError });
  t.throws(() => given([created(), deleted, deleted]).state(), { instanceOf: IllegalEventError });
});
