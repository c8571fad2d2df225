import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openApiDocument } from '../../src/read-api/schema/openapi-document.ts';

/**
 * Checks the answers API tests receive against Weir's own OpenAPI document, so the document
 * cannot drift from the code: an answer whose route declares a JSON schema for its status must
 * match it, or the call throws (failing the test that met it).
 */

type MediaType = { schema?: unknown; examples?: Record<string, unknown> };
type Operation = { responses?: Record<string, { content?: Record<string, MediaType> }> };
type Document = { paths: Record<string, Record<string, Operation>>; components?: unknown };

type Template = { path: string; pattern: RegExp; literals: number };

// ajv-formats is CommonJS: its default export arrives wrapped under tsx's ESM interop.
type FormatsPlugin = (ajv: Ajv2020) => Ajv2020;
const formatsModule = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsModule.default ?? formatsModule;

export type ResponseCheck = ((
  method: string,
  url: string,
  status: number,
  contentType: string,
  body: unknown,
) => void) & {
  /** The error codes the document lists for this answer (its JSON examples, one per code), or null if it has none. */
  documentedCodes(method: string, url: string, status: number): string[] | null;
};

/**
 * A validator of values against schemas of `document` (its `#/components/...` references resolved),
 * with the checker's own ajv: the problem, or null for a valid value.
 */
export function schemaValidatorOf(document: {
  components?: unknown;
}): (schema: unknown) => (value: unknown) => string | null {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  let ids = 0;
  return (schema) => {
    const validate =
      schema && typeof schema === 'object'
        ? ajv.compile({ $id: `https://weir.invalid/example/${ids++}`, components: document.components, ...schema })
        : null;
    return (value) => (validate && !validate(value) ? ajv.errorsText(validate.errors) : null);
  };
}

function checkerFor(documentText: string): ResponseCheck {
  const document = JSON.parse(documentText) as Document;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const templates: Template[] = Object.keys(document.paths).map((path) => {
    const segments = path.split('/');
    const source = segments
      .map((s) => (/^\{[^}]+\}$/.test(s) ? '[^/]+' : s.replace(/[.*+?^$()|[\]\\]/g, '\\$&')))
      .join('/');
    return { path, pattern: new RegExp(`^${source}$`), literals: segments.filter((s) => !s.startsWith('{')).length };
  });
  const validators = new Map<string, ValidateFunction | null>();
  let ids = 0;

  const validatorOf = (path: string, method: string, status: number): ValidateFunction | null => {
    const key = `${method} ${path} ${status}`;
    if (validators.has(key)) return validators.get(key)!;
    const responses = document.paths[path]?.[method]?.responses ?? {};
    const schema = responses[String(status)]?.content?.['application/json']?.schema;
    // The schema's `#/components/...` references resolve against a root that carries the components.
    const validate =
      schema && typeof schema === 'object'
        ? ajv.compile({ $id: `https://weir.invalid/check/${ids++}`, components: document.components, ...schema })
        : null;
    validators.set(key, validate);
    return validate;
  };

  const templateOf = (url: string) => {
    let path = new URL(url).pathname;
    if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
    const matches = templates.filter((t) => t.pattern.test(path)).sort((a, b) => b.literals - a.literals);
    return { path, template: matches[0] };
  };

  const documentedCodes = (method: string, url: string, status: number) => {
    const { template } = templateOf(url);
    const answer = template && document.paths[template.path]?.[method.toLowerCase()]?.responses?.[String(status)];
    const examples = answer?.content?.['application/json']?.examples;
    return examples ? Object.keys(examples) : null;
  };
  /**
   * A 4xx with a `code` on a documented operation must be one of the codes the document lists for
   * that status, so the document cannot list fewer codes than the route answers. A method the
   * document has no operation for (a 405) has nothing to list them in.
   */
  const checkCode = (method: string, url: string, status: number, body: unknown) => {
    const code = (body as { code?: unknown } | null)?.code;
    if (status < 400 || status >= 500 || typeof code !== 'string') return;
    const { path, template } = templateOf(url);
    if (!template || !document.paths[template.path]?.[method.toLowerCase()]) return;
    const codes = documentedCodes(method, url, status);
    if (codes?.includes(code)) return;
    throw new Error(
      `the answer to ${method} ${path} (${status}) has code ${code}, which the OpenAPI document (${template.path}) does not list for ${status}: it lists ${codes?.join(', ') || 'none'}`,
    );
  };
  const check = (method: string, url: string, status: number, contentType: string, body: unknown) => {
    if (!contentType.includes('application/json')) return;
    const { path, template } = templateOf(url);
    if (!template) return;
    const validate = validatorOf(template.path, method.toLowerCase(), status);
    if (validate && !validate(body))
      throw new Error(
        `the answer to ${method} ${path} (${status}) does not match the OpenAPI document (${template.path}): ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
      );
    checkCode(method, url, status, body);
  };
  return Object.assign(check, { documentedCodes });
}

const checkers = new Map<string, ResponseCheck>();
const documents = new Map<string, Promise<ResponseCheck | null>>();

/** The check for the Weir at `baseUrl` (its document fetched once), or null where there is no document. */
export function responseCheckFor(baseUrl: string): Promise<ResponseCheck | null> {
  let pending = documents.get(baseUrl);
  if (!pending) {
    pending = fetch(`${baseUrl}/api/v1/openapi.json`)
      .then(async (response) => {
        if (response.status !== 200) return null;
        const text = await response.text();
        // Every Weir of one test run serves the same document: compile its schemas once.
        let checker = checkers.get(text);
        if (!checker) {
          checker = checkerFor(text);
          checkers.set(text, checker);
        }
        return checker;
      })
      .catch(() => null);
    documents.set(baseUrl, pending);
  }
  return pending;
}

let webhookChecker: ((body: string) => void) | undefined;

/**
 * Checks a delivered webhook body against the document's `webhooks` entry for its type (the
 * document built in-process: the webhooks do not depend on the routes), so the documented
 * payloads cannot drift either. Throws on a mismatch or an undocumented type.
 */
export function checkWebhookBody(body: string): void {
  if (!webhookChecker) {
    const document = openApiDocument({}, { version: 'test' }) as {
      webhooks?: Record<string, { post?: { requestBody?: { content?: Record<string, MediaType> } } }>;
      components?: unknown;
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    const validators = new Map<string, ValidateFunction>();
    let ids = 0;
    webhookChecker = (text) => {
      let event: { type?: unknown; data?: unknown };
      try {
        event = JSON.parse(text) as typeof event;
      } catch {
        return; // not a webhook: some tests post other things to their receiver
      }
      if (typeof event?.type !== 'string' || event.data === undefined) return;
      const type = event.type;
      let validate = validators.get(type);
      if (!validate) {
        const schema = document.webhooks?.[type]?.post?.requestBody?.content?.['application/json']?.schema;
        if (!schema || typeof schema !== 'object') throw new Error(`webhook ${type} is not in the OpenAPI document`);
        validate = ajv.compile({
          $id: `https://weir.invalid/webhook/${ids++}`,
          components: document.components,
          ...schema,
        });
        validators.set(type, validate);
      }
      if (!validate(event))
        throw new Error(
          `the ${type} webhook does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 2000)}`,
        );
    };
  }
  webhookChecker(body);
}
