/**
 * The business metric of endpoint health: one count per endpoint the service disables itself (it
 * answered 410, or failed for days: endpoint-health.ts). The stack alarms on it. No imports, so the
 * CDK app reads the name without loading the code that writes it.
 */
export const ENDPOINTS_DISABLED_METRIC = 'WebhookEndpointsDisabled';
