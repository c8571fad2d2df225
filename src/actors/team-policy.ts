import type { Aggregate } from './aggregate.ts';

/**
 * An organization's rules for its dashboard users, one record per organization (stream
 * `team_policy-<organization id>`): today whether every user must sign in with two factors.
 */
export type TeamPolicy = { twoFactorRequired: boolean };

export type TeamPolicyEvent = { type: 'TeamTwoFactorRequirementChanged'; data: { required: boolean; at: string } };

export type TeamPolicyCommand = { type: 'SetTwoFactorRequirement'; required: boolean };

export const teamPolicyAggregate: Aggregate<TeamPolicy, TeamPolicyEvent, TeamPolicyCommand> = {
  category: 'team_policy',
  initialState: () => ({ twoFactorRequired: false }),
  evolve: (_policy, event) => ({ twoFactorRequired: event.data.required }),
  decide(policy, command, { now }) {
    if (policy.twoFactorRequired === command.required) return [];
    return [{ type: 'TeamTwoFactorRequirementChanged', data: { required: command.required, at: now } }];
  },
};
