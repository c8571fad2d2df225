import { REFERENCE_OPERATION_IDS } from './reference-operation-ids.ts';

/**
 * Weir's own operations, named in the reference's style (`<Resource>Controller_<verb>`) so SDKs
 * generated from either document name their methods alike. A POST that mirrors the reference's
 * PUT is `…ByPost`.
 */
const WEIR_OPERATION_IDS: Readonly<Record<string, string>> = {
  'post /api/v1/checkout/sessions/{id}/cancel': 'SessionsController_cancel',
  'put /api/v1/organization': 'OrganizationController_update',
  'put /api/v1/organization/payment-setting': 'PaymentSettingController_update',
  'put /api/v1/organization/invoice-setting': 'InvoiceSettingController_update',
  'post /api/v1/organization/invoice-setting': 'InvoiceSettingController_updateByPost',
  'get /api/v1/organization/card-processor': 'CardProcessorController_get',
  'put /api/v1/organization/card-processor': 'CardProcessorController_update',
  'delete /api/v1/organization/card-processor': 'CardProcessorController_delete',
  'get /api/v1/api-keys': 'ApiKeyController_findAll',
  'post /api/v1/api-keys': 'ApiKeyController_create',
  'get /api/v1/api-keys/{id}': 'ApiKeyController_get',
  'delete /api/v1/api-keys/{id}': 'ApiKeyController_delete',
  'post /api/v1/api-keys/{id}/regenerate': 'ApiKeyController_regenerate',
  'get /api/v1/webhook-endpoints/event-types': 'WebhookEndpointController_getEventTypes',
  'get /api/v1/webhook-endpoints/{id}/deliveries': 'WebhookEndpointController_getDeliveries',
  'post /api/v1/webhook-endpoints/{id}/deliveries/{deliveryId}/resend': 'WebhookEndpointController_resendDelivery',
  'post /api/v1/products/{id}/activate': 'ProductController_activateByPost',
  'post /api/v1/products/{id}/deactivate': 'ProductController_deactivateByPost',
  'post /api/v1/payment-links/{id}/activate': 'PaymentLinkController_activateByPost',
  'post /api/v1/payment-links/{id}/deactivate': 'PaymentLinkController_deactivateByPost',
  'post /api/v1/subscriptions/{id}/pause': 'SubscriptionController_pause',
  'get /api/v1/reports/{name}': 'ReportController_get',
  'post /api/v1/analytics/query': 'AnalyticsController_query',
  'get /api/v1/audit/verify': 'AuditController_verify',
  'get /api/v1/events': 'EventController_findAll',
  'post /api/v1/faucet': 'FaucetController_fund',
  'get /checkout/{id}': 'HostedCheckoutController_page',
  'post /checkout/{id}': 'HostedCheckoutController_choosePaymentMethodForm',
  'get /checkout/{id}/status': 'HostedCheckoutController_status',
  'post /checkout/{id}/payment-method': 'HostedCheckoutController_choosePaymentMethod',
  'post /checkout/{id}/promotion-code': 'HostedCheckoutController_applyPromotionCode',
  'post /checkout/{id}/cancel': 'HostedCheckoutController_cancel',
  'post /checkout/{id}/test-payment': 'HostedCheckoutController_testPayment',
  'post /checkout/{id}/solana-transaction': 'HostedCheckoutController_solanaTransaction',
  'get /invoices/{id}': 'HostedInvoiceController_page',
  'get /invoices/{id}/pdf': 'HostedInvoiceController_pdf',
  'get /invoices/{id}/pay': 'HostedInvoiceController_pay',
  'get /pay/{id}': 'HostedPaymentLinkController_page',
  'post /pay/{id}': 'HostedPaymentLinkController_submit',
  'get /assets/brand/{file}': 'StaticAssetController_brandLogo',
  'get /assets/{name}': 'StaticAssetController_get',
  'get /favicon.ico': 'StaticAssetController_favicon',
  'post /admin/organizations': 'AdminController_createOrganization',
  'get /api/v1/openapi.json': 'DocsController_openApi',
  'get /docs': 'DocsController_page',
  'get /docs/redoc.standalone.js': 'DocsController_redoc',
  'get /health': 'OperationsController_health',
  'get /metrics': 'OperationsController_metrics',
};

/** `get /api/v1/payment-links/{}`: parameter names differ between the documents (`{linkId}`, `{id}`). */
const shapeOf = (method: string, path: string) => `${method} ${path.replace(/\{[^}]+\}/g, '{}')}`;

const REFERENCE_BY_SHAPE = new Map(
  Object.entries(REFERENCE_OPERATION_IDS).map(([key, id]) => {
    const [method = '', path = ''] = key.split(' ');
    return [shapeOf(method, path), id] as const;
  }),
);

const pascal = (text: string) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('');

/** A route on neither list (one added later): its tag and method and literal segments, still in the style. */
const derived = (method: string, path: string, tag: string) =>
  `${pascal(tag)}Controller_${method}${pascal(
    path
      .split('/')
      .filter((s) => s && !s.startsWith('{'))
      .join(' '),
  )}`;

/**
 * Names each operation of one document: the reference's id for an operation it has (same method
 * and path), else Weir's own; unique within the document (a clash gets a number).
 */
export function operationIds() {
  const taken = new Set<string>();
  return (method: string, path: string, tag: string): string => {
    const base =
      REFERENCE_BY_SHAPE.get(shapeOf(method, path)) ??
      WEIR_OPERATION_IDS[`${method} ${path}`] ??
      derived(method, path, tag);
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}${n}`;
    taken.add(id);
    return id;
  };
}
