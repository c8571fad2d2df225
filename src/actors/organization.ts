import type { Aggregate } from './aggregate.ts';
import { InvalidStateError, NotFoundError, ValidationError } from '../shared/errors.ts';
import type { Environment } from '../event-store/event-store.ts';

export type AddressDetails = {
  line1: string | null;
  line2: string | null;
  city: string | null;
  state: string | null;
  postalCode: string | null;
  country: string | null;
};

export type BusinessDetails = {
  name: string;
  email: string | null;
  supportEmail: string | null;
  phone: string | null;
  supportPhone: string | null;
  addressDetails: AddressDetails;
  websiteUrl: string | null;
  supportUrl: string | null;
  privacyUrl: string | null;
  termsUrl: string | null;
  companyIdentificationNumber: string | null;
  taxIdentificationNumber: string | null;
  /** Size bands the merchant gives about itself (the reference's onboarding answers); absent on older records. */
  noOfEmployees?: string | null;
  monthlyPaymentVolume?: string | null;
};

export type PaymentSetting = {
  paymentMethodTypes: string[];
  preferredChainId: number | null;
  preferredCurrency: string | null;
  allowSwap: boolean;
  applyFee: boolean;
  feePercentage: number;
  applyGasFee: boolean;
  allowSplitPayments: boolean;
  slippagePercentage: number;
};

export type WithdrawalAddress = {
  id: string;
  name: string;
  address: string;
  chainId: number;
  isDefault: boolean;
  createdAt: string;
  updatedAt: string;
};

/**
 * How the organization's invoices are numbered and what they say by default (the reference's
 * invoice setting). Numbers are per tenant (`merchant_level`): `invoicePrefix` and the sequence,
 * which runs `sequenceOffset` ahead of the count of the tenant's invoices (so a merchant moving
 * from another system can continue its numbering).
 */
export type InvoiceSetting = {
  numberingScheme: 'merchant_level';
  invoicePrefix: string;
  sequenceOffset: number;
  description: string | null;
  footer: string | null;
};

export const defaultInvoiceSetting: InvoiceSetting = {
  numberingScheme: 'merchant_level',
  invoicePrefix: 'INV-',
  sequenceOffset: 0,
  description: null,
  footer: null,
};

export type Organization = BusinessDetails & {
  id: string;
  environment: Environment;
  createdAt: string;
  updatedAt: string;
  status: 'active';
  kind: 'business';
  brandColor: string | null;
  brandLogo: string | null;
  paymentSetting: PaymentSetting;
  withdrawalAddresses: WithdrawalAddress[];
  /** Absent until the merchant first changes it (read: `defaultInvoiceSetting`). */
  invoiceSetting?: InvoiceSetting;
};

export type OrganizationEvent =
  | { type: 'OrganizationCreated'; data: { id: string; environment: Environment; name: string; at: string } }
  | { type: 'BusinessDetailsUpdated'; data: { changes: Partial<BusinessDetails>; at: string } }
  | { type: 'BrandingUpdated'; data: { brandColor: string | null; brandLogo: string | null; at: string } }
  | { type: 'PaymentSettingUpdated'; data: { changes: Partial<PaymentSetting>; at: string } }
  | { type: 'WithdrawalAddressAdded'; data: { withdrawalAddress: WithdrawalAddress } }
  | { type: 'WithdrawalAddressUpdated'; data: { id: string; name: string; address: string; at: string } }
  | { type: 'WithdrawalAddressRemoved'; data: { id: string; at: string } }
  | { type: 'WithdrawalAddressMarkedDefault'; data: { id: string; at: string } }
  | { type: 'InvoiceSettingUpdated'; data: { changes: Partial<InvoiceSetting>; at: string } };

export type OrganizationCommand =
  | { type: 'CreateOrganization'; id: string; environment: Environment; name: string }
  | { type: 'UpdateBusinessDetails'; changes: Partial<BusinessDetails> }
  | { type: 'UpdateBranding'; brandColor: string | null; brandLogo: string | null }
  | { type: 'UpdatePaymentSetting'; changes: Partial<PaymentSetting> }
  | { type: 'AddWithdrawalAddress'; id: string; name: string; address: string; chainId: number }
  | { type: 'UpdateWithdrawalAddress'; id: string; name: string; address: string }
  | { type: 'RemoveWithdrawalAddress'; id: string }
  | { type: 'MarkWithdrawalAddressDefault'; id: string }
  | { type: 'UpdateInvoiceSetting'; changes: Partial<InvoiceSetting> };

export const organizationRecordId = (organizationId: string, environment: Environment) =>
  `${organizationId}_${environment}`;

const emptyAddress: AddressDetails = {
  line1: null,
  line2: null,
  city: null,
  state: null,
  postalCode: null,
  country: null,
};

export const defaultPaymentSetting: PaymentSetting = {
  paymentMethodTypes: ['wallet'],
  preferredChainId: null,
  preferredCurrency: null,
  allowSwap: false,
  applyFee: false,
  feePercentage: 0,
  applyGasFee: false,
  allowSplitPayments: false,
  slippagePercentage: 10,
};

const touch = (org: Organization, at: string): Organization => ({ ...org, updatedAt: at });

export function evolveOrganization(org: Organization | null, event: OrganizationEvent): Organization | null {
  if (event.type === 'OrganizationCreated') {
    const { id, environment, name, at } = event.data;
    return {
      id,
      environment,
      name,
      createdAt: at,
      updatedAt: at,
      status: 'active',
      kind: 'business',
      email: null,
      supportEmail: null,
      phone: null,
      supportPhone: null,
      addressDetails: emptyAddress,
      websiteUrl: null,
      supportUrl: null,
      privacyUrl: null,
      termsUrl: null,
      companyIdentificationNumber: null,
      taxIdentificationNumber: null,
      brandColor: null,
      brandLogo: null,
      paymentSetting: defaultPaymentSetting,
      withdrawalAddresses: [],
    };
  }
  if (!org) return null;
  switch (event.type) {
    case 'BusinessDetailsUpdated':
      return touch({ ...org, ...event.data.changes }, event.data.at);
    case 'BrandingUpdated':
      return touch({ ...org, brandColor: event.data.brandColor, brandLogo: event.data.brandLogo }, event.data.at);
    case 'InvoiceSettingUpdated':
      return touch(
        { ...org, invoiceSetting: { ...defaultInvoiceSetting, ...org.invoiceSetting, ...event.data.changes } },
        event.data.at,
      );
    case 'PaymentSettingUpdated':
      return touch({ ...org, paymentSetting: { ...org.paymentSetting, ...event.data.changes } }, event.data.at);
    case 'WithdrawalAddressAdded': {
      const added = event.data.withdrawalAddress;
      const others = added.isDefault
        ? org.withdrawalAddresses.map((w) => (w.chainId === added.chainId ? { ...w, isDefault: false } : w))
        : org.withdrawalAddresses;
      return touch({ ...org, withdrawalAddresses: [...others, added] }, added.createdAt);
    }
    case 'WithdrawalAddressUpdated':
      return touch(
        {
          ...org,
          withdrawalAddresses: org.withdrawalAddresses.map((w) =>
            w.id === event.data.id
              ? { ...w, name: event.data.name, address: event.data.address, updatedAt: event.data.at }
              : w,
          ),
        },
        event.data.at,
      );
    case 'WithdrawalAddressRemoved': {
      const removed = org.withdrawalAddresses.find((w) => w.id === event.data.id);
      let rest = org.withdrawalAddresses.filter((w) => w.id !== event.data.id);
      if (removed?.isDefault) {
        const heir = rest.find((w) => w.chainId === removed.chainId);
        if (heir) rest = rest.map((w) => (w.id === heir.id ? { ...w, isDefault: true } : w));
      }
      return touch({ ...org, withdrawalAddresses: rest }, event.data.at);
    }
    case 'WithdrawalAddressMarkedDefault': {
      const target = org.withdrawalAddresses.find((w) => w.id === event.data.id);
      if (!target) return org;
      return touch(
        {
          ...org,
          withdrawalAddresses: org.withdrawalAddresses.map((w) =>
            w.chainId === target.chainId ? { ...w, isDefault: w.id === target.id } : w,
          ),
        },
        event.data.at,
      );
    }
  }
}

function requireOrg(org: Organization | null): Organization {
  if (!org) throw new InvalidStateError('organization does not exist', 'resource_missing');
  return org;
}

function requireAddress(org: Organization, id: string): WithdrawalAddress {
  const found = org.withdrawalAddresses.find((w) => w.id === id);
  if (!found) throw new NotFoundError('withdrawal address', id);
  return found;
}

export const organizationAggregate: Aggregate<Organization | null, OrganizationEvent, OrganizationCommand> = {
  category: 'organization',
  initialState: () => null,
  evolve: evolveOrganization,
  decide(org, command, { now }) {
    if (command.type === 'CreateOrganization') {
      if (org) return [];
      return [
        {
          type: 'OrganizationCreated',
          data: { id: command.id, environment: command.environment, name: command.name, at: now },
        },
      ];
    }
    const current = requireOrg(org);
    switch (command.type) {
      case 'UpdateBusinessDetails':
        return [{ type: 'BusinessDetailsUpdated', data: { changes: command.changes, at: now } }];
      case 'UpdateBranding':
        return [
          { type: 'BrandingUpdated', data: { brandColor: command.brandColor, brandLogo: command.brandLogo, at: now } },
        ];
      case 'UpdateInvoiceSetting':
        return [{ type: 'InvoiceSettingUpdated', data: { changes: command.changes, at: now } }];
      case 'UpdatePaymentSetting':
        return [{ type: 'PaymentSettingUpdated', data: { changes: command.changes, at: now } }];
      case 'AddWithdrawalAddress': {
        // Its id is already there: the same request run again (see seededIds).
        if (current.withdrawalAddresses.some((w) => w.id === command.id)) return [];
        if (
          current.withdrawalAddresses.some(
            (w) => w.chainId === command.chainId && w.address.toLowerCase() === command.address.toLowerCase(),
          )
        ) {
          throw new ValidationError(
            'address',
            `is already a payment method on chain ${command.chainId}`,
            'resource_already_exists',
          );
        }
        const isDefault = !current.withdrawalAddresses.some((w) => w.chainId === command.chainId);
        return [
          {
            type: 'WithdrawalAddressAdded',
            data: {
              withdrawalAddress: {
                id: command.id,
                name: command.name,
                address: command.address,
                chainId: command.chainId,
                isDefault,
                createdAt: now,
                updatedAt: now,
              },
            },
          },
        ];
      }
      case 'UpdateWithdrawalAddress': {
        const target = requireAddress(current, command.id);
        if (
          current.withdrawalAddresses.some(
            (w) =>
              w.id !== target.id &&
              w.chainId === target.chainId &&
              w.address.toLowerCase() === command.address.toLowerCase(),
          )
        ) {
          throw new ValidationError(
            'address',
            `is already a payment method on chain ${target.chainId}`,
            'resource_already_exists',
          );
        }
        return [
          {
            type: 'WithdrawalAddressUpdated',
            data: { id: command.id, name: command.name, address: command.address, at: now },
          },
        ];
      }
      case 'RemoveWithdrawalAddress':
        requireAddress(current, command.id);
        return [{ type: 'WithdrawalAddressRemoved', data: { id: command.id, at: now } }];
      case 'MarkWithdrawalAddressDefault':
        if (requireAddress(current, command.id).isDefault) return [];
        return [{ type: 'WithdrawalAddressMarkedDefault', data: { id: command.id, at: now } }];
    }
  },
};
