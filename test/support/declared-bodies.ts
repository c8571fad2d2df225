import type { ExecutionContext } from 'ava';
import type { z } from 'zod';
import { openApiPath } from '../../src/read-api/schema/openapi-document.ts';
import { type DeclaredRoute, declarationOf } from '../../src/read-api/schema/route.ts';
import { mountedLayers } from '../hostile/route-table.ts';
import type { BodySchema } from './request-schemas.ts';
import { startTestWeir } from './weir-harness.ts';

type Media = { schema?: { $ref?: string; example?: unknown }; example?: unknown };
export type ServedDocument = {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, Media> } }>>;
  components: { schemas: Record<string, BodySchema & { example?: unknown }> };
};

export type DeclaredBody = {
  name: string;
  route: DeclaredRoute & { body: z.ZodType };
  schema: BodySchema;
  example: unknown;
};

/** The served document, and each declared route with a JSON body: its schema there and the example shown for it. */
export async function declaredBodies(
  t: ExecutionContext,
): Promise<{ document: ServedDocument; bodies: DeclaredBody[] }> {
  const weir = await startTestWeir(t);
  const document = (await (await fetch(`${weir.url}/api/v1/openapi.json`)).json()) as ServedDocument;
  const bodies: DeclaredBody[] = [];
  for (const { layer } of mountedLayers(weir)) {
    const route = declarationOf(layer);
    const media = route?.body
      ? document.paths[openApiPath(String(layer.path)).path]?.[route.method]?.requestBody?.content?.['application/json']
      : undefined;
    if (!route?.body || !media) continue;
    const ref = media.schema?.$ref;
    const schema = (ref ? document.components.schemas[ref.split('/').pop()!] : media.schema) as BodySchema & {
      example?: unknown;
    };
    bodies.push({
      name: `${route.method} ${String(layer.path)}`,
      route: route as DeclaredRoute & { body: z.ZodType },
      schema: schema ?? {},
      example: media.example ?? schema?.example,
    });
  }
  return { document, bodies };
}
