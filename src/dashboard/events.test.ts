import test from 'ava';
import { organizationAggregate, organizationRecordId } from '../actors/organization.ts';
import { recordOrganization } from '../tenancy/create-organization.ts';
import { authWorld } from './auth/test-world.ts';
import { createDashboardEvents } from './events.ts';

test('a listener hears the topics of its own tenant’s changes only, once the read model has them; none are followed without listeners', async (t) => {
  const world = await authWorld(t);
  const other = await recordOrganization(world.commands, 'Other', 'cli');
  await world.settled();
  const events = createDashboardEvents(world);
  const heard: string[] = [];
  const stop = events.subscribe({ organizationId: world.organizationId, environment: 'test' }, (topics) =>
    heard.push(...topics),
  );
  t.is(events.listeners(), 1);
  const update = async (organizationId: string, environment: 'test' | 'live') => {
    await world.commands.handle(
      organizationAggregate,
      organizationRecordId(organizationId, environment),
      { type: 'UpdateBusinessDetails', changes: { supportEmail: 'help@example.com' } },
      { organizationId, environment, actor: 'cli' },
    );
    await world.settled();
    // The listener reads the changed documents before it speaks.
    await new Promise((resolve) => setImmediate(resolve));
  };
  await update(other.organizationId, 'test');
  await update(world.organizationId, 'live');
  t.deepEqual(heard, [], 'another organization, and the other environment, are not heard');
  await update(world.organizationId, 'test');
  t.deepEqual(heard, ['organization']);
  stop();
  t.is(events.listeners(), 0);
  await update(world.organizationId, 'test');
  t.deepEqual(heard, ['organization'], 'nothing after unsubscribing');
});
