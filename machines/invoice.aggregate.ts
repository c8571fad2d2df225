import type { SnapshotFrom } from 'xstate';
import { machineFold, type Aggregate } from '../src/actors/aggregate.ts';
import { decideInvoice, type InvoiceCommand } from './invoice.decide.ts';
import { invoiceMachine } from './invoice.machine.ts';
import type { InvoiceEvent } from './invoice.types.ts';

export type InvoiceSnapshot = SnapshotFrom<typeof invoiceMachine>;

export const invoiceAggregate: Aggregate<InvoiceSnapshot, InvoiceEvent, InvoiceCommand> = {
  category: 'invoice',
  ...machineFold(invoiceMachine),
  decide: decideInvoice,
};
