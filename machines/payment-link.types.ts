import type { Environment } from '../src/event-store/event-store.ts';
import type { CustomField } from './collected-data.types.ts';

/**
 * The three kinds of link of the spec: a fixed price, a price the payer enters (within optional
 * bounds, with optional suggestions), and a subscription to a recurring price.
 */
export type PaymentLinkPricing = 'fixed' | 'variable' | 'subscription';
export const PAYMENT_LINK_PRICINGS: readonly PaymentLinkPricing[] = ['fixed', 'variable', 'subscription'];

/** A question on the link's page (the reference's PaymentLinkCustomFieldsDto, with its rules). */
export type PaymentLinkCustomField = CustomField;

export type AllowedChain = { chainId: number; isPreferred: boolean };

export type PaymentLink = {
  id: string;
  organizationId: string;
  environment: Environment;
  /** The reference API's link type (`multiple`: reusable; `one_time`), stored and shown as given. */
  type: 'one_time' | 'multiple';
  pricing: PaymentLinkPricing;
  /** The reference's `priceType`: `recurring` for subscription links. */
  priceType: 'one_time' | 'recurring';
  title: string;
  description: string | null;
  image: string | null;
  tags: string[];
  currency: string;
  /** The price's unit amount, 10^8-scaled (null for a variable-price link). */
  amount: string | null;
  /** The catalog price a fixed or subscription link sells (null for a variable-price link). */
  priceId: string | null;
  /** The product sold: the price's product, or the link's own product for a variable price. */
  productId: string;
  interval: 'day' | 'week' | 'month' | 'year' | null;
  intervalCount: number | null;
  /** Variable price only: amounts offered as one-click choices, 10^8-scaled. */
  suggestedAmounts: string[];
  /** Variable price only: bounds of the amount the payer enters, 10^8-scaled (null: none). */
  minimumAmount: string | null;
  maximumAmount: string | null;
  nameCollection: boolean;
  emailCollection: boolean;
  phoneNumberCollection: boolean;
  billingAddressCollection: boolean;
  shippingAddressCollection: boolean;
  customFields: { fields: PaymentLinkCustomField[] };
  submitType: 'pay' | 'book' | 'donate';
  /** `redirect` sends the payer to `afterCompletionRedirectUrl`; `hosted_confirmation` shows `afterCompletionConfirmMsg`. */
  afterCompletion: 'redirect' | 'hosted_confirmation';
  afterCompletionRedirectUrl: string | null;
  afterCompletionConfirmMsg: string | null;
  allowPromotionCodes: boolean;
  /** Networks the payer may pay on (empty: every network of the organization). */
  allowedChains: AllowedChain[];
  metadata: Record<string, string>;
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
  deletedAt: string | null;
};

/** What fixes the price of a link: set at creation, never changed (create a new link instead). */
export const PRICING_FIELDS = [
  'pricing',
  'priceType',
  'currency',
  'amount',
  'priceId',
  'productId',
  'interval',
  'intervalCount',
] as const;

/** What a merchant may change on a link after creation. */
export type PaymentLinkChanges = Partial<
  Omit<
    PaymentLink,
    | 'id'
    | 'organizationId'
    | 'environment'
    | 'isActive'
    | 'createdAt'
    | 'updatedAt'
    | 'deleted'
    | 'deletedAt'
    | (typeof PRICING_FIELDS)[number]
  >
>;

/** The domain events of a payment link, as stored in the log (`type` + `data`). */
export type PaymentLinkEvent =
  | { type: 'PaymentLinkCreated'; data: { link: PaymentLink } }
  | { type: 'PaymentLinkUpdated'; data: { changes: PaymentLinkChanges; at: string } }
  | { type: 'PaymentLinkActivated'; data: { at: string } }
  | { type: 'PaymentLinkDeactivated'; data: { at: string } }
  | { type: 'PaymentLinkDeleted'; data: { at: string } };

export type PaymentLinkEventType = PaymentLinkEvent['type'];
