import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../shared/aws';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { CONDITION, nowIso, type Item } from '../../shared/table/dynamo';
import { findByIdIndex } from '../../shared/table/id-index';
import { PREFIX, tenantPk } from '../../shared/table/keys';
import { GSIS } from '../../shared/table/table-schema';
import { getTenant } from '../tenants/tenants';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './event-types';
import { generateSecret } from './internal/signing';
import { checkTargetUrl, type TargetOptions } from './internal/ssrf';

/**
 * Webhook endpoints: where an organization receives events, which events, and the secret that
 * signs them. Rows live in the tenant's partition; a gsi1 entry finds one by its bare id for the
 * operator (`webhook deliveries <endpointId>`), as API keys are found by id.
 */
export type WebhookEndpoint = {
  id: string;
  tenantId: string;
  url: string;
  events: WebhookEventType[];
  secret: string;
  createdAt: string;
};

export type AddWebhookEndpointInput = { url: string; events?: string[] };

export const endpointKey = (tenantId: string, endpointId: string) => ({
  pk: tenantPk(tenantId),
  sk: `${PREFIX.webhookEndpoint}${endpointId}`,
});

export function toItem(endpoint: WebhookEndpoint): Item {
  return {
    ...endpointKey(endpoint.tenantId, endpoint.id),
    [GSIS.gsi1.partitionKey]: `${PREFIX.webhookEndpointId}${endpoint.id}`,
    [GSIS.gsi1.sortKey]: PREFIX.webhookEndpointId,
    type: 'webhookEndpoint',
    ...endpoint,
  };
}

export function fromItem(item: Item): WebhookEndpoint {
  return {
    id: item.id as string,
    tenantId: item.tenantId as string,
    url: item.url as string,
    events: ((item.events as string[] | undefined) ?? []).filter(isWebhookEventType),
    secret: item.secret as string,
    createdAt: item.createdAt as string,
  };
}

function parseEvents(events: string[] | undefined): WebhookEventType[] {
  if (events === undefined) return [...WEBHOOK_EVENT_TYPES];
  if (events.length === 0) throw new ValidationError(`events: must name at least one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  const unknown = events.filter((e) => !isWebhookEventType(e));
  if (unknown.length > 0) throw new ValidationError(`events: unknown event "${unknown[0]}"; one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  return [...new Set(events as WebhookEventType[])];
}

/**
 * Registers an endpoint (the portal's job). The URL must be https on a host the organization
 * approved; the secret is returned here and shown once.
 */
export async function addWebhookEndpoint(
  tenantId: string,
  input: AddWebhookEndpointInput,
  options: TargetOptions = {},
  now = new Date(),
): Promise<WebhookEndpoint> {
  const tenant = await getTenant(tenantId);
  if (!tenant) throw new NotFoundError('Tenant');
  const url = checkTargetUrl(input.url, tenant.approvedHosts, options);
  const endpoint: WebhookEndpoint = {
    id: uuidv7(now),
    tenantId,
    url: url.href,
    events: parseEvents(input.events),
    secret: generateSecret(),
    createdAt: nowIso(now),
  };
  await dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item: toItem(endpoint), ConditionExpression: CONDITION.rowIsNew }));
  return endpoint;
}

export async function getWebhookEndpoint(tenantId: string, endpointId: string): Promise<WebhookEndpoint | undefined> {
  const { Item } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: endpointKey(tenantId, endpointId) }));
  return Item ? fromItem(Item) : undefined;
}

/** The operator's lookup by bare id (eventually consistent: the index lags a write briefly). */
export async function findWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint> {
  const item = await findByIdIndex(PREFIX.webhookEndpointId, endpointId);
  if (!item) throw new NotFoundError('Webhook endpoint');
  return fromItem(item);
}

export async function listWebhookEndpoints(tenantId: string): Promise<WebhookEndpoint[]> {
  const endpoints: WebhookEndpoint[] = [];
  let startKey: Item | undefined;
  do {
    const page = await dynamo.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': tenantPk(tenantId), ':prefix': PREFIX.webhookEndpoint },
        ExclusiveStartKey: startKey,
      }),
    );
    endpoints.push(...(page.Items ?? []).map(fromItem));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return endpoints;
}

/** The tenant's endpoints that receive `type`. An organization has a handful, so one query and a filter here. */
export async function endpointsSubscribedTo(tenantId: string, type: WebhookEventType): Promise<WebhookEndpoint[]> {
  return (await listWebhookEndpoints(tenantId)).filter((endpoint) => endpoint.events.includes(type));
}
