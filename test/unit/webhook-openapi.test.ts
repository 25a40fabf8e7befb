import { validate } from '@readme/openapi-parser';
import { marshall } from '@aws-sdk/util-dynamodb';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../lambdas/handlers/api/openapi/generator';
import { deriveEvent } from '../../lambdas/contexts/webhooks/events';
import { toItem as callToItem } from '../../lambdas/contexts/calls/calls';
import { uuidv7 } from '../../lambdas/shared/ids';
import { ROUTER_FILTER_PATTERNS } from '../../lambdas/contexts/webhooks/filter-criteria';
import { TERMINAL_CALL_STATUSES } from '../../lambdas/contexts/calls/call-statuses';

/** Lambda's event filtering for the patterns the router uses: every key present, its value one of the listed ones. */
function matchesFilter(pattern: unknown, value: unknown): boolean {
  if (Array.isArray(pattern)) return pattern.some((allowed) => JSON.stringify(allowed) === JSON.stringify(value));
  if (typeof pattern !== 'object' || pattern === null || typeof value !== 'object' || value === null) return false;
  return Object.entries(pattern).every(([key, inner]) => matchesFilter(inner, (value as Record<string, unknown>)[key]));
}

type WebhookOperation = {
  post: {
    parameters: { name: string; in: string; deprecated?: boolean }[];
    requestBody: { content: Record<string, { schema: { $ref: string } }> };
  };
};

const document = buildOpenApiDocument() as ReturnType<typeof buildOpenApiDocument> & {
  webhooks: Record<string, WebhookOperation>;
};

describe('the webhooks section of the OpenAPI document', () => {
  it('documents one POST per event type with the delivery headers', () => {
    // Act
    const webhooks = document.webhooks;

    // Assess
    expect(Object.keys(webhooks).sort()).toEqual([
      'call.completed',
      'consent.changed',
      'contact.created',
      'contact.deleted',
      'contact.updated',
      'message.canceled',
      'message.delivered',
      'message.failed',
      'sms.received',
      'voicemail.received',
      'webhook.test',
    ]);
    const names = webhooks['call.completed'].post.parameters
      .filter((p) => p.in === 'header' && !p.deprecated)
      .map((p) => p.name);
    expect(names).toEqual(
      expect.arrayContaining(['X-Service-Event', 'X-Service-Timestamp', 'X-Service-Signature', 'X-Service-Delivery']),
    );
    const legacy = webhooks['call.completed'].post.parameters.filter((p) => p.deprecated).map((p) => p.name);
    expect(legacy).toEqual(['X-Legacy-Event', 'X-Legacy-Timestamp', 'X-Legacy-Signature', 'X-Legacy-Delivery']);
  });

  it('is a valid OpenAPI 3.1 document whose event bodies validate against their components', async () => {
    const result = await validate(structuredClone(document) as never);
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    ajv.addSchema({ $id: 'openapi', components: document.components } as never);
    const ref = document.webhooks['call.completed'].post.requestBody.content['application/json'].schema.$ref;
    const event = deriveEvent({
      eventId: 'e',
      eventName: 'INSERT',
      approximateCreationMs: Date.now(),
      newImage: callToItem(uuidv7(), {
        id: uuidv7(),
        direction: 'outbound',
        fromNumber: '+14155550100',
        toNumber: '+14155550101',
        status: 'no-answer',
        startedAt: new Date().toISOString(),
        answeredAt: null,
        endedAt: null,
        durationSec: null,
        isInternal: false,
        agentId: null,
        contactId: null,
      }),
    })!;

    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(ajv.validate(`openapi${ref}`, JSON.parse(event.body))).toBe(true);
  });

  it('filters the router on the same terminal statuses the derivation uses', () => {
    const callPattern = ROUTER_FILTER_PATTERNS[0] as { dynamodb: { NewImage: { status: { S: string[] } } } };

    expect(callPattern.dynamodb.NewImage.status.S).toEqual([...TERMINAL_CALL_STATUSES]);
    for (const pattern of ROUTER_FILTER_PATTERNS) expect(JSON.parse(JSON.stringify(pattern))).toEqual(pattern);
  });

  it('lets a text moving into a final status reach the router, and no other change of an outbound text', () => {
    // Prepare: stream records as Lambda's filter sees them (marshalled images)
    const text = (status: string) => ({
      type: 'message',
      direction: 'outbound',
      status,
      id: uuidv7(),
      tenantId: uuidv7(),
    });
    const record = (eventName: string, newImage: Record<string, unknown>) => ({
      eventName,
      dynamodb: { NewImage: marshall(newImage) },
    });

    // Act
    const routed = (r: unknown) => ROUTER_FILTER_PATTERNS.some((pattern) => matchesFilter(pattern, r));

    // Assess
    expect(routed(record('MODIFY', text('delivered')))).toBe(true);
    expect(routed(record('MODIFY', text('failed')))).toBe(true);
    expect(routed(record('MODIFY', text('sent')))).toBe(false);
    expect(routed(record('INSERT', text('queued')))).toBe(false);
    expect(routed(record('INSERT', text('delivered')))).toBe(false); // a copy, never a change (see the derivation)
    expect(routed(record('REMOVE', text('failed')))).toBe(false);
  });
});
