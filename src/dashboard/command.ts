import type { Aggregate, DomainEvent } from '../actors/aggregate.ts';
import type { CommandResult } from '../actors/command-handler.ts';
import { WeirError } from '../shared/errors.ts';
import type { DashboardContext, DashboardDeps } from './context.ts';

/**
 * For records with no API route (the team's own): run a command for the signed-in user's tenant,
 * as the API's `commandFor` does for a key (pages change business records through `apiFor`): the
 * same aggregates and rules, recorded as done by `user:<id>`, and waited for until the read models
 * have it, so the page drawn next shows the change.
 */
export async function dashboardCommand<TState, TEvent extends DomainEvent, TCommand>(
  deps: Pick<DashboardDeps, 'commands' | 'projections'>,
  ctx: DashboardContext,
  aggregate: Aggregate<TState, TEvent, TCommand>,
  id: string,
  command: TCommand,
): Promise<CommandResult<TState>> {
  const { tenant, user } = ctx.state;
  const result = await deps.commands.handle(aggregate, id, command, {
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    actor: `user:${user.id}`,
    clientAddress: ctx.ip,
  });
  if (result.position !== null) await deps.projections.waitFor(result.position);
  return result;
}

/**
 * A refusal as a form shows it: under its field when the message names one (`email: must be …`,
 * the API's convention), else above the form. Pair with `Field`'s `error` to keep the form as typed.
 */
export function formErrorOf(error: WeirError): { field: string | null; message: string } {
  const match = /^([\w.[\]]+): (.*)$/s.exec(error.message);
  const text = match ? match[2]! : error.message;
  const message = `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
  return { field: match ? match[1]! : null, message };
}
