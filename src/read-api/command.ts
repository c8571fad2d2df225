import type { Aggregate, DomainEvent } from '../actors/aggregate.ts';
import type { CommandContext, CommandResult } from '../actors/command-handler.ts';
import type { ApiContext, ApiDeps } from './api-context.ts';
import { isTenants } from '../tenancy/same-tenant.ts';

/**
 * Run a command for the request's tenant and wait until the read models include its events, so
 * the response and any GET that follows see the change.
 */
export async function commandFor<TState, TEvent extends DomainEvent, TCommand>(
  deps: ApiDeps,
  ctx: ApiContext,
  aggregate: Aggregate<TState, TEvent, TCommand>,
  id: string,
  command: TCommand,
): Promise<CommandResult<TState>> {
  const result = await deps.commands.handle(aggregate, id, command, commandContextOf(ctx));
  if (result.position !== null) await deps.projections.waitFor(result.position);
  return result;
}

/** Who asks, for which tenant, and the request's id as the correlation of what it writes. */
export function commandContextOf(ctx: ApiContext): CommandContext {
  const { tenant } = ctx.state;
  return {
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    actor: tenant.actor,
    ...(tenant.clientAddress ? { clientAddress: tenant.clientAddress } : {}),
    correlationId: ctx.get('x-request-id') || undefined,
  };
}

/** The tenant's document with this id, or a 404 (another tenant's record is a 404 too). */
export function ownedBy<T extends { organizationId: string; environment: string }>(
  ctx: ApiContext,
  doc: T | null,
): doc is T {
  return isTenants(doc, ctx.state.tenant);
}
