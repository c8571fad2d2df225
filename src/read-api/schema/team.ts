import { USER_ROLES } from '../../actors/user.ts';
import { email } from './customer.ts';
import { bodyObject, requiredOneOf, timestamp, z } from './fields.ts';
import { OrganizationSchema } from './organization.ts';

const role = z.enum(USER_ROLES).openapi({ description: 'owner, admin, developer (API keys, webhooks) or viewer' });

export const UserSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    firstName: z.string().openapi({ description: "The name's first word ('' when the user gave none)" }),
    lastName: z.string().openapi({ description: "The rest of the name ('' when none)" }),
    role,
    status: z.enum(['active']).openapi({ description: 'Removed users are not listed' }),
    twoFactorEnabled: z.boolean(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('User', {
    example: {
      id: '0f8fad5b-d9cb-469f-a165-70867728950e',
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      firstName: 'Ada',
      lastName: 'Lovelace',
      role: 'admin',
      status: 'active',
      twoFactorEnabled: true,
      createdAt: '2026-05-01T08:00:00.000Z',
      updatedAt: '2026-05-01T08:00:00.000Z',
    },
  });

export const UserList = z.array(UserSchema).openapi('UserList');

export const UserRoleUpdate = bodyObject({ role: requiredOneOf(USER_ROLES) }).openapi('UserRoleUpdate', {
  example: { role: 'developer' },
});

export const InviteCreate = bodyObject({
  email: email({ required: true, min: 1 }),
  role: requiredOneOf(USER_ROLES),
}).openapi('InviteCreate', { example: { email: 'grace@example.com', role: 'developer' } });

export const InviteSchema = z
  .object({
    id: z.string(),
    email: z.string(),
    role,
    organizationId: z.string(),
    status: z.enum(['pending', 'expired', 'accepted', 'revoked']),
    expireAt: timestamp().openapi({ description: 'Until when the link works (7 days from the last send)' }),
    inviteUrl: z.string().nullable().openapi({
      description:
        'The one-time link, only in the answer that made it (create and resend): Weir keeps its hash, never the link; null elsewhere',
    }),
    invitedBy: z.string().openapi({ description: 'user:<id> or api_key:<id>' }),
    acceptedUserId: z.string().nullable(),
    createdAt: timestamp(),
    updatedAt: timestamp(),
  })
  .openapi('Invite');

export const InviteList = z.array(InviteSchema).openapi('InviteList');

export const CurrentUserSchema = z
  .object({
    id: z.string().openapi({ description: "The user's id, or for a secret key the key's id" }),
    accountType: z.enum(['email', 'api_key']),
    email: z.string().nullable().openapi({ description: 'null for a secret key' }),
    name: z.string().nullable(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    role: z
      .string()
      .openapi({ description: "The user's role; `api_key` for a secret key (it acts as the organization)" }),
    status: z.enum(['active']),
    twoFactorEnabled: z.boolean(),
    organization: OrganizationSchema.pick({ id: true, name: true, type: true, status: true, ownerId: true })
      .extend({ environment: z.enum(['test', 'live']), createdAt: timestamp(), updatedAt: timestamp() })
      .openapi({ description: "The organization, as the caller's environment records it; `ownerId` its first owner" }),
  })
  .openapi('CurrentUser');
