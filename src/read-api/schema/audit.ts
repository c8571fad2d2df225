import { z } from './fields.ts';

/** Answer schemas of `GET /api/v1/audit/verify` (src/audit/audit-verify.ts builds the report). */

const PositionText = z.string().openapi({ description: 'A log position (decimal)', example: '1042' });

const checkpointFields = {
  position: PositionText,
  hash: z.string().openapi({ description: "The chain's SHA-256 hash at that position (hex)" }),
  signedAt: z.string(),
  publicKey: z.string().openapi({ description: "The signer's ed25519 public key (base64url, 32 bytes)" }),
  signature: z.string().openapi({ description: 'ed25519 signature (base64url) of the checkpoint message' }),
  loggedAt: PositionText.nullable().openapi({ description: "The checkpoint's own position in the log" }),
};

export const AuditCheckpointSchema = z.object(checkpointFields).openapi('AuditCheckpoint');

const ChainProblemSchema = z
  .object({
    kind: z.enum([
      'content_changed',
      'link_broken',
      'link_missing',
      'seal_broken',
      'start_missing',
      'checkpoint_forged',
      'checkpoint_mismatch',
      'checkpoint_position_missing',
      'checkpoint_malformed',
    ]),
    position: PositionText.nullable(),
    message: z.string(),
  })
  .openapi('AuditChainProblem');

const ReadModelDifferenceSchema = z
  .object({
    collection: z.string(),
    id: z.string(),
    kind: z.enum(['missing', 'unexpected', 'different', 'misindexed']).openapi({
      description:
        '`missing` from the live read models, `unexpected` in them, `different` in `fields`, or `misindexed`: what the store keeps beside the document for queries (an indexed or sort field, the row’s id) is not what the document gives, for `fields`, so lists, counts and reports disagree with it',
    }),
    fields: z.array(z.string()),
  })
  .openapi('AuditReadModelDifference');

export const AuditVerificationSchema = z
  .object({
    holds: z.boolean().openapi({ description: 'The chain, every checkpoint and the compared read models hold' }),
    startedAt: z.string(),
    ms: z.number().int(),
    chain: z.object({
      holds: z.boolean(),
      events: z.number().int(),
      unchainedEvents: z.number().int().openapi({ description: 'Events written before the chain started' }),
      unchainedThrough: PositionText.nullable(),
      head: z.object({ position: PositionText, hash: z.string() }).nullable(),
      // Inline: a nullable reference to a component is generated as allOf, which refuses null.
      checkpoints: z.object({ checked: z.number().int(), latest: z.object(checkpointFields).nullable() }),
      unsigned: z.number().int().openapi({
        description:
          'Events after the highest position a checkpoint signed (all when none did): a cut from the end there goes unseen',
      }),
      firstProblem: ChainProblemSchema.nullable().openapi({ description: 'The first broken link, in log order' }),
      problems: z.array(ChainProblemSchema),
      problemCount: z.number().int(),
    }),
    readModels: z.object({
      compared: z.boolean(),
      reason: z.string().nullable(),
      holds: z.boolean(),
      position: PositionText.nullable().openapi({ description: 'The log position both sides were compared at' }),
      collections: z.number().int(),
      documents: z.number().int(),
      differences: z.array(ReadModelDifferenceSchema),
      differenceCount: z.number().int(),
    }),
  })
  .openapi('AuditVerification');
