import type { Aggregate } from './aggregate.ts';
import { InvalidStateError } from '../shared/errors.ts';

/** A webhook endpoint as the log keeps it; the signing secret only ever sealed. */
export type WebhookEndpoint = {
  id: string;
  organizationId: string;
  environment: string;
  description: string;
  url: string;
  sealedSecret: string;
  /** The secret a regenerate replaced, still signing beside the new one until `previousSecretExpiresAt`. */
  previousSealedSecret?: string | null;
  previousSecretExpiresAt?: string | null;
  isDisabled: boolean;
  enabledEvents: { events: string[] };
  createdAt: string;
  updatedAt: string;
  deleted: boolean;
};

/** When the replaced secret stops signing, or null when none signs any more at `nowMs` (none kept, or expired). */
export function previousSecretExpiry(endpoint: WebhookEndpoint, nowMs: number): string | null {
  const at = endpoint.previousSecretExpiresAt;
  return endpoint.previousSealedSecret && at && Date.parse(at) > nowMs ? at : null;
}

export type WebhookEndpointChanges = Partial<
  Pick<WebhookEndpoint, 'description' | 'url' | 'isDisabled' | 'enabledEvents'>
>;

export type WebhookEndpointEvent =
  | { type: 'WebhookEndpointCreated'; data: { endpoint: Omit<WebhookEndpoint, 'deleted' | 'updatedAt'> } }
  | { type: 'WebhookEndpointUpdated'; data: { changes: WebhookEndpointChanges; at: string } }
  | {
      type: 'WebhookEndpointSecretRegenerated';
      data: { sealedSecret: string; at: string; previous?: { sealedSecret: string; expiresAt: string } };
    }
  | { type: 'WebhookEndpointTestRequested'; data: { testId: string; at: string } }
  | { type: 'WebhookEndpointDeleted'; data: { at: string } };

export type WebhookEndpointCommand =
  | { type: 'CreateWebhookEndpoint'; endpoint: Omit<WebhookEndpoint, 'deleted' | 'updatedAt' | 'createdAt'> }
  | { type: 'UpdateWebhookEndpoint'; changes: WebhookEndpointChanges }
  | { type: 'RegenerateWebhookSecret'; sealedSecret: string; keepPreviousForSeconds?: number }
  | { type: 'SendTestWebhook'; testId: string }
  | { type: 'DeleteWebhookEndpoint' };

export function evolveWebhookEndpoint(
  endpoint: WebhookEndpoint | null,
  event: WebhookEndpointEvent,
): WebhookEndpoint | null {
  switch (event.type) {
    case 'WebhookEndpointCreated':
      return { ...event.data.endpoint, updatedAt: event.data.endpoint.createdAt, deleted: false };
    case 'WebhookEndpointUpdated':
      return endpoint && { ...endpoint, ...event.data.changes, updatedAt: event.data.at };
    case 'WebhookEndpointSecretRegenerated':
      return (
        endpoint && {
          ...endpoint,
          sealedSecret: event.data.sealedSecret,
          previousSealedSecret: event.data.previous?.sealedSecret ?? null,
          previousSecretExpiresAt: event.data.previous?.expiresAt ?? null,
          updatedAt: event.data.at,
        }
      );
    case 'WebhookEndpointTestRequested':
      return endpoint;
    case 'WebhookEndpointDeleted':
      return endpoint && { ...endpoint, deleted: true, updatedAt: event.data.at };
  }
}

export const webhookEndpointAggregate: Aggregate<WebhookEndpoint | null, WebhookEndpointEvent, WebhookEndpointCommand> =
  {
    category: 'webhook_endpoint',
    initialState: () => null,
    evolve: evolveWebhookEndpoint,
    decide(endpoint, command, { now }) {
      if (command.type === 'CreateWebhookEndpoint') {
        if (endpoint) return [];
        return [{ type: 'WebhookEndpointCreated', data: { endpoint: { ...command.endpoint, createdAt: now } } }];
      }
      if (!endpoint || endpoint.deleted)
        throw new InvalidStateError('webhook endpoint does not exist', 'resource_missing');
      switch (command.type) {
        case 'UpdateWebhookEndpoint':
          return [{ type: 'WebhookEndpointUpdated', data: { changes: command.changes, at: now } }];
        case 'RegenerateWebhookSecret': {
          // The secret being replaced keeps signing for the overlap asked for (a receiver not yet moved still passes).
          const keep = command.keepPreviousForSeconds ?? 0;
          const previous =
            keep > 0
              ? {
                  sealedSecret: endpoint.sealedSecret,
                  expiresAt: new Date(Date.parse(now) + keep * 1000).toISOString(),
                }
              : undefined;
          return [
            {
              type: 'WebhookEndpointSecretRegenerated',
              data: { sealedSecret: command.sealedSecret, at: now, ...(previous ? { previous } : {}) },
            },
          ];
        }
        case 'SendTestWebhook':
          return [{ type: 'WebhookEndpointTestRequested', data: { testId: command.testId, at: now } }];
        case 'DeleteWebhookEndpoint':
          return [{ type: 'WebhookEndpointDeleted', data: { at: now } }];
      }
    },
  };
