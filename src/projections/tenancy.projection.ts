import { evolveApiKey, type ApiKeyEvent } from '../actors/api-key.ts';
import { evolveOrganization, type OrganizationEvent } from '../actors/organization.ts';
import type { RecordedEvent } from '../event-store/event-store.ts';
import { COLLECTIONS, type ApiKeyDoc, type ApiKeySecretDoc, type OrganizationDoc } from './collections.ts';
import type { Projection } from './projection.ts';

const idOf = (event: RecordedEvent) => event.streamId.slice(event.streamId.indexOf('-') + 1);

/** Organizations (one document per organization and environment) and API keys with their hash index. */
export const tenancyProjection: Projection = {
  name: 'tenancy',
  // 2: organizations hold the `_revision` they reflect.
  version: 2,
  collections: [COLLECTIONS.organizations, COLLECTIONS.apiKeys, COLLECTIONS.apiKeySecrets],
  categories: ['organization', 'api_key'],
  async apply(event, store) {
    if (event.streamId.startsWith('organization-')) {
      const orgs = store.collection<OrganizationDoc>(COLLECTIONS.organizations);
      const id = idOf(event);
      const current = await orgs.get(id);
      // Already folded in (a retried batch): a withdrawal address would be listed twice.
      if (current?._revision !== undefined && current._revision >= event.revision) return;
      const next = evolveOrganization(current, event as unknown as OrganizationEvent);
      if (next) await orgs.put({ ...next, _id: id, organizationId: next.id, _revision: event.revision });
      return;
    }
    if (event.streamId.startsWith('api_key-')) {
      const keys = store.collection<ApiKeyDoc>(COLLECTIONS.apiKeys);
      const secrets = store.collection<ApiKeySecretDoc>(COLLECTIONS.apiKeySecrets);
      const id = idOf(event);
      const current = await keys.get(id);
      const typed = event as unknown as ApiKeyEvent;
      const next = evolveApiKey(current, typed);
      if (!next) return;
      await keys.put({ ...next, _id: id });
      if (typed.type === 'ApiKeyRegenerated') await secrets.delete(typed.data.previousSecretHash);
      if (next.deleted) await secrets.delete(next.secretHash);
      else
        await secrets.put({
          _id: next.secretHash,
          keyId: next.id,
          organizationId: next.organizationId,
          environment: next.environment,
          scope: next.scope,
        });
    }
  },
};
