import * as z from 'zod/mini';
import { EVENT_SCHEMAS } from '../../../contexts/webhooks/event-schemas'; // importing registers the event components
import { WEBHOOK_EXAMPLES } from './examples';

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event type, each a POST the service makes
 * to the organization's endpoint, with the headers it carries and the body schema.
 */
const header = (name: string, description: string, deprecated = false) => ({
  name,
  in: 'header',
  required: true,
  ...(deprecated && { deprecated: true }),
  description,
  schema: { type: 'string' },
});

const HEADERS = [
  header('X-Service-Event', 'The event type, e.g. `call.completed`'),
  header('X-Service-Timestamp', 'Milliseconds since the Unix epoch, fresh per attempt; treat as an opaque string'),
  header(
    'X-Service-Signature',
    'Lowercase hex HMAC-SHA256 of `X-Service-Timestamp + "." + rawBody`, keyed with the endpoint secret string as ' +
      'issued',
  ),
  header('X-Service-Delivery', 'The delivery id, the same on every retry: use it as an idempotency key'),
  header('X-Legacy-Event', 'Deprecated name of X-Service-Event (identical value)', true),
  header('X-Legacy-Timestamp', 'Deprecated name of X-Service-Timestamp (identical value)', true),
  header('X-Legacy-Signature', 'Deprecated name of X-Service-Signature (identical value)', true),
  header('X-Legacy-Delivery', 'Deprecated name of X-Service-Delivery (identical value)', true),
  header('webhook-id', 'Standard Webhooks: the delivery id'),
  header('webhook-timestamp', 'Standard Webhooks: seconds since the Unix epoch'),
  header(
    'webhook-signature',
    'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `webhook-id.webhook-timestamp.rawBody`',
  ),
];

const DESCRIPTION =
  'Delivered as an HTTPS POST to each endpoint subscribed to the event, at least once. ' +
  'Answer with any 2xx within 10 seconds; anything else, a redirect (not followed) or no answer is retried ' +
  'with backoff (1, 2, 4, 8, 16, 32, 60 minutes: 8 attempts); a 429 or 503 with `Retry-After` waits at least that ' +
  'long ' +
  '(at most 60 minutes). A 410 disables the endpoint at once, and so do 5 days in which every attempt failed. ' +
  'Events may arrive out of order: of two events about one resource, the higher `sequence` is the newer. ' +
  'Verify the signature over the raw body and refuse timestamps five minutes or more away from your clock.';

export function webhooksSection(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(EVENT_SCHEMAS).map(([type, schema]) => {
      const meta = z.globalRegistry.get(schema) as { id: string; description?: string };
      return [
        type,
        {
          post: {
            operationId: `webhook${meta.id.replace(/^WebhookEvent/, '')}`,
            tags: ['Webhooks'],
            summary: meta.description,
            description: DESCRIPTION,
            parameters: HEADERS,
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: { $ref: `#/components/schemas/${meta.id}` },
                  examples: {
                    [type]: {
                      summary: `A ${type} event`,
                      value: WEBHOOK_EXAMPLES[type as keyof typeof WEBHOOK_EXAMPLES],
                    },
                  },
                },
              },
            },
            responses: { '2XX': { description: 'Acknowledged; the delivery will not be retried' } },
          },
        },
      ];
    }),
  );
}
