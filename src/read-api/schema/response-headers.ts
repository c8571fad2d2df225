/**
 * Headers Weir sends on answers besides the content's own, as shared components each response
 * references: `X-Request-Id` on every answer (middleware.ts), `Idempotent-Replayed` on a POST's
 * answer given again for its Idempotency-Key (idempotency.ts replays only answers below 400).
 */

type Node = Record<string, unknown>;

export const RESPONSE_HEADERS = {
  RequestId: {
    description:
      "This request's id: the `X-Request-Id` sent when it is 1 to 128 letters, digits or `._:-`, else a new UUID. Weir's log line for the request carries it",
    schema: { type: 'string', maxLength: 128 },
  },
  IdempotentReplayed: {
    description:
      'Sent, as `true`, when this is the answer recorded for an earlier request with the same Idempotency-Key and body, given again: nothing was done this time',
    schema: { type: 'string', enum: ['true'] },
  },
} as const;

const ref = (name: keyof typeof RESPONSE_HEADERS) => ({ $ref: `#/components/headers/${name}` });

const takesIdempotencyKey = (operation: Node) =>
  Array.isArray(operation.parameters) &&
  operation.parameters.some((p: Node) => p.in === 'header' && p.name === 'Idempotency-Key');

/** The document with the header components, referenced from every response they apply to. */
export function withResponseHeaders<T extends { paths?: unknown; components?: unknown }>(document: T): T {
  const paths = (document.paths ?? {}) as Record<string, Record<string, Node>>;
  for (const operations of Object.values(paths))
    for (const operation of Object.values(operations)) {
      const replayable = takesIdempotencyKey(operation);
      for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Node>)) {
        const headers: Node = { ...((response.headers as Node | undefined) ?? {}), 'X-Request-Id': ref('RequestId') };
        if (replayable && Number(status) < 400) headers['Idempotent-Replayed'] = ref('IdempotentReplayed');
        response.headers = headers;
      }
    }
  const components = (document.components ?? {}) as Node;
  return { ...document, components: { ...components, headers: RESPONSE_HEADERS } };
}
