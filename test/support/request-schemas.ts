/** A schema of an OpenAPI document (Weir's or the reference's), as far as its request bodies go. */
export type BodySchema = {
  $ref?: string;
  type?: string | string[];
  description?: string;
  deprecated?: boolean;
  properties?: Record<string, BodySchema>;
  required?: string[];
  additionalProperties?: boolean | BodySchema;
  items?: BodySchema;
  allOf?: BodySchema[];
  oneOf?: BodySchema[];
  anyOf?: BodySchema[];
};

export type BodyDocument = {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: BodySchema }> } }>>;
};

/** `schema` with its `$ref`s followed in `document`. */
export function resolved(document: unknown, schema: BodySchema | undefined): BodySchema | undefined {
  let s = schema;
  while (s?.$ref)
    s = s.$ref
      .split('/')
      .slice(1)
      .reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], document) as BodySchema;
  return s;
}

/** The JSON request body schema of an operation, if it takes one. */
export const requestSchema = (document: BodyDocument, path: string, method: string) =>
  document.paths[path]?.[method]?.requestBody?.content?.['application/json']?.schema;
