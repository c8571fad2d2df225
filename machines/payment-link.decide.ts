import { InvalidStateError, ValidationError } from '../src/shared/errors.ts';
import { compareDecimals } from '../src/shared/decimal.ts';
import { formatAmount } from '../src/shared/money.ts';
import { unbillableInterval } from './billing-calendar.ts';
import type { PaymentLinkSnapshot } from './payment-link.aggregate.ts';
import type { LengthBounds } from './collected-data.types.ts';
import type {
  PaymentLink,
  PaymentLinkChanges,
  PaymentLinkCustomField,
  PaymentLinkEvent,
} from './payment-link.types.ts';

/** A link as the API asks for it; the decider fills in times and the deleted flag. */
export type NewPaymentLink = Omit<PaymentLink, 'createdAt' | 'updatedAt' | 'deleted' | 'deletedAt'>;

export type PaymentLinkCommand =
  | { type: 'CreatePaymentLink'; link: NewPaymentLink }
  | { type: 'UpdatePaymentLink'; changes: PaymentLinkChanges }
  | { type: 'ActivatePaymentLink' }
  | { type: 'DeactivatePaymentLink' }
  | { type: 'DeletePaymentLink' };

export type PaymentLinkCommandType = PaymentLinkCommand['type'];

export const MAX_CUSTOM_FIELDS = 5;
export const MAX_DROPDOWN_OPTIONS = 50;
export const MAX_SUGGESTED_AMOUNTS = 5;
/** Longest answer a text or numeric field may ask for. */
export const MAX_ANSWER_LENGTH = 255;
export const CUSTOM_FIELD_KEY = /^[A-Za-z0-9_]{1,40}$/;

const POSITIVE = /^[1-9][0-9]*$/;
const money = (amount: string, currency: string) => `${formatAmount(BigInt(amount))} ${currency.toUpperCase()}`;

function validatePricing(link: NewPaymentLink): void {
  const { pricing } = link;
  if (pricing === 'variable') {
    if (link.amount !== null)
      throw new ValidationError('amount', 'a variable-price link takes no amount: the payer enters it');
    if (link.priceId !== null || link.priceType !== 'one_time')
      throw new ValidationError('priceId', 'a variable-price link takes no price: the payer enters the amount');
  } else {
    if (link.amount === null || !POSITIVE.test(link.amount))
      throw new ValidationError(
        'amount',
        `must be more than 0 for a ${pricing === 'fixed' ? 'fixed-price' : 'subscription'} link`,
      );
    if (link.priceId === null)
      throw new ValidationError(
        'priceId',
        `is required for a ${pricing === 'fixed' ? 'fixed-price' : 'subscription'} link`,
        'parameter_missing',
      );
    const recurring = link.priceType === 'recurring';
    if (pricing === 'subscription') {
      if (!(recurring && link.interval !== null))
        throw new ValidationError('priceId', 'a subscription link needs a recurring price');
      // The rule every subscription is sold under: a price it cannot bill would make a link no payer can pay.
      const unbillable = unbillableInterval(link.interval);
      if (unbillable) throw new ValidationError('priceId', unbillable);
    }
    if (pricing === 'fixed' && (recurring || link.interval !== null))
      throw new ValidationError(
        'priceId',
        'a fixed-price link needs a one-time price; a recurring price makes a subscription link',
      );
  }

  const variableOnly =
    link.suggestedAmounts.length > 0
      ? 'suggestedAmounts'
      : link.minimumAmount !== null
        ? 'minimumAmount'
        : link.maximumAmount !== null
          ? 'maximumAmount'
          : null;
  if (pricing !== 'variable') {
    if (variableOnly) throw new ValidationError(variableOnly, 'is only for variable-price links');
    return;
  }
  for (const [field, value] of [
    ['minimumAmount', link.minimumAmount],
    ['maximumAmount', link.maximumAmount],
  ] as const) {
    if (value !== null && !POSITIVE.test(value)) throw new ValidationError(field, 'must be more than 0');
  }
  const { minimumAmount: min, maximumAmount: max, currency } = link;
  if (min !== null && max !== null && BigInt(min) > BigInt(max))
    throw new ValidationError('minimumAmount', `must not be more than maximumAmount (${money(max, currency)})`);
  if (link.suggestedAmounts.length > MAX_SUGGESTED_AMOUNTS)
    throw new ValidationError('suggestedAmounts', `must have at most ${MAX_SUGGESTED_AMOUNTS} items`);
  link.suggestedAmounts.forEach((amount, i) => {
    const field = `suggestedAmounts[${i}]`;
    if (!POSITIVE.test(amount)) throw new ValidationError(field, 'must be more than 0');
    if (link.suggestedAmounts.indexOf(amount) !== i)
      throw new ValidationError(field, `repeats ${money(amount, currency)}`);
    if (min !== null && BigInt(amount) < BigInt(min))
      throw new ValidationError(field, `${money(amount, currency)} is below minimumAmount (${money(min, currency)})`);
    if (max !== null && BigInt(amount) > BigInt(max))
      throw new ValidationError(field, `${money(amount, currency)} is above maximumAmount (${money(max, currency)})`);
  });
}

function validateLengthBounds(bounds: LengthBounds, path: string): void {
  const { minimumLength: min, maximumLength: max } = bounds;
  for (const [name, value] of [
    ['minimumLength', min],
    ['maximumLength', max],
  ] as const) {
    if (value !== null && !(Number.isSafeInteger(value) && value >= 0 && value <= MAX_ANSWER_LENGTH)) {
      throw new ValidationError(`${path}.${name}`, `must be an integer from 0 to ${MAX_ANSWER_LENGTH}`);
    }
  }
  if (max === 0) throw new ValidationError(`${path}.maximumLength`, 'must be at least 1');
  if (min !== null && max !== null && min > max)
    throw new ValidationError(`${path}.minimumLength`, `must not be more than maximumLength (${max})`);
}

function validateCustomField(field: PaymentLinkCustomField, path: string): void {
  if (!CUSTOM_FIELD_KEY.test(field.key))
    throw new ValidationError(`${path}.key`, 'must be 1 to 40 letters, digits or _');
  if (field.label.custom.trim().length === 0) throw new ValidationError(`${path}.label.custom`, 'must not be empty');
  switch (field.type) {
    case 'text':
      validateLengthBounds(field.text, `${path}.text`);
      return;
    case 'numeric': {
      validateLengthBounds(field.numeric, `${path}.numeric`);
      const { minimum, maximum } = field.numeric;
      if (minimum !== null && maximum !== null && compareDecimals(minimum, maximum) > 0) {
        throw new ValidationError(`${path}.numeric.minimum`, `must not be more than maximum (${maximum})`);
      }
      return;
    }
    case 'dropdown': {
      const { options } = field.dropdown;
      if (options.length === 0) throw new ValidationError(`${path}.dropdown.options`, 'must have at least 1 item');
      if (options.length > MAX_DROPDOWN_OPTIONS)
        throw new ValidationError(`${path}.dropdown.options`, `must have at most ${MAX_DROPDOWN_OPTIONS} items`);
      options.forEach((option, i) => {
        if (option.value.trim().length === 0)
          throw new ValidationError(`${path}.dropdown.options[${i}].value`, 'must not be empty');
        if (option.label.trim().length === 0)
          throw new ValidationError(`${path}.dropdown.options[${i}].label`, 'must not be empty');
        if (options.findIndex((o) => o.value === option.value) !== i)
          throw new ValidationError(`${path}.dropdown.options[${i}].value`, `repeats ${option.value}`);
      });
    }
  }
}

/**
 * The rules a link must meet, apart from field shapes: its pricing fits its kind, variable
 * bounds and suggestions agree, the after-completion action has what it needs, custom fields
 * are well formed with unique keys, and at most one allowed chain is preferred. Checked on
 * creation and on every update; exported so the API checks before it creates a product or price.
 */
export function validatePaymentLink(link: NewPaymentLink): void {
  if (link.title.trim().length === 0)
    throw new ValidationError('title', 'must not be empty', 'parameter_invalid_string_empty');
  validatePricing(link);
  if (link.pricing === 'subscription' && !link.emailCollection) {
    throw new ValidationError(
      'emailCollection',
      "a subscription link must collect the payer's email: each renewal invoice is mailed to it",
    );
  }

  if (link.afterCompletion === 'redirect') {
    if (link.afterCompletionRedirectUrl === null)
      throw new ValidationError(
        'afterCompletionRedirectUrl',
        'is required when afterCompletion is redirect',
        'parameter_missing',
      );
    if (link.afterCompletionConfirmMsg !== null)
      throw new ValidationError('afterCompletionConfirmMsg', 'is only for afterCompletion hosted_confirmation');
  } else if (link.afterCompletionRedirectUrl !== null) {
    throw new ValidationError('afterCompletionRedirectUrl', 'is only for afterCompletion redirect');
  }

  const fields = link.customFields.fields;
  if (fields.length > MAX_CUSTOM_FIELDS)
    throw new ValidationError('customFields.fields', `must have at most ${MAX_CUSTOM_FIELDS} items`);
  fields.forEach((field, i) => {
    const path = `customFields.fields[${i}]`;
    validateCustomField(field, path);
    if (fields.findIndex((f) => f.key.toLowerCase() === field.key.toLowerCase()) !== i)
      throw new ValidationError(`${path}.key`, `repeats ${field.key} (keys are compared regardless of case)`);
  });

  link.allowedChains.forEach((chain, i) => {
    if (link.allowedChains.findIndex((c) => c.chainId === chain.chainId) !== i)
      throw new ValidationError(`allowedChains[${i}].chainId`, `repeats ${chain.chainId}`);
  });
  if (link.allowedChains.filter((c) => c.isPreferred).length > 1)
    throw new ValidationError('allowedChains', 'at most one chain can be preferred');
}

const statusOf = (snapshot: PaymentLinkSnapshot) => snapshot.value as 'new' | 'active' | 'inactive' | 'deleted';

/**
 * Decide which facts a command produces. Repeating a command that already took effect (create
 * twice, activate an active link, delete a deleted one, an update that changes nothing)
 * produces no events; a deleted link refuses everything else.
 */
export function decidePaymentLink(
  snapshot: PaymentLinkSnapshot,
  command: PaymentLinkCommand,
  ctx: { now: string },
): PaymentLinkEvent[] {
  const status = statusOf(snapshot);
  const { now } = ctx;
  if (command.type === 'CreatePaymentLink') {
    if (status !== 'new') return [];
    validatePaymentLink(command.link);
    return [
      {
        type: 'PaymentLinkCreated',
        data: { link: { ...command.link, createdAt: now, updatedAt: now, deleted: false, deletedAt: null } },
      },
    ];
  }
  const link = snapshot.context.link;
  if (!link) throw new InvalidStateError('payment link does not exist', 'resource_missing');
  if (command.type === 'DeletePaymentLink')
    return status === 'deleted' ? [] : [{ type: 'PaymentLinkDeleted', data: { at: now } }];
  if (status === 'deleted') throw new InvalidStateError(`payment link ${link.id} is deleted`, 'payment_link_deleted');

  switch (command.type) {
    case 'ActivatePaymentLink':
      return status === 'active' ? [] : [{ type: 'PaymentLinkActivated', data: { at: now } }];
    case 'DeactivatePaymentLink':
      return status === 'inactive' ? [] : [{ type: 'PaymentLinkDeactivated', data: { at: now } }];
    case 'UpdatePaymentLink': {
      const changes: PaymentLinkChanges = {};
      for (const [key, value] of Object.entries(command.changes) as [keyof PaymentLinkChanges, unknown][]) {
        if (value !== undefined && JSON.stringify(link[key]) !== JSON.stringify(value))
          (changes as Record<string, unknown>)[key] = value;
      }
      if (Object.keys(changes).length === 0) return [];
      validatePaymentLink({ ...link, ...changes });
      return [{ type: 'PaymentLinkUpdated', data: { changes, at: now } }];
    }
  }
}
