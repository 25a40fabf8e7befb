import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, logger, metrics, MetricUnit, TABLE_NAME } from '../../shared/aws';
import { NotFoundError, ValidationError } from '../../shared/errors';
import { uuidv7 } from '../../shared/ids';
import { CONDITION, isConditionalCheckFailed, nowIso, str, type Item } from '../../shared/table/dynamo';
import { findByIdIndex } from '../../shared/table/id-index';
import { PREFIX, sortKeyStartsWith, tenantPk } from '../../shared/table/keys';
import { queryAll } from '../../shared/table/query-all';
import { GSIS } from '../../shared/table/table-schema';
import { getTenant } from '../tenants/tenants';
import { DEFAULT_EVENT_TYPES, isWebhookEventType, WEBHOOK_EVENT_TYPES, type WebhookEventType } from './event-types';
import { ENDPOINTS_DISABLED_METRIC } from './health-metrics';
import { generateSecret } from './internal/signing';
import { checkTargetUrl, type TargetOptions } from './internal/ssrf';
import { atSite } from '../../shared/table/round-site';

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
  /** Set while the endpoint is disabled (by the operator or by its health): no deliveries are made to it. */
  disabledAt: string | null;
  /** Why it is disabled: null while enabled. */
  disabledReason: DisabledReason | null;
  /** The first failed attempt since its last success: null while its last attempt succeeded (or none was made). */
  failingSince: string | null;
  /** The secret before the last `rotate-secret`, still signing until `previousSecretExpiresAt`. */
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
};

export type AddWebhookEndpointInput = { url: string; events?: string[] };

/**
 * Why an endpoint is disabled: `operator` (`webhook disable`), `gone` (it answered 410 Gone),
 * `failing` (every attempt failed for ENDPOINT_FAILING_LIMIT_MS, endpoint-health.ts). The last two
 * are the service's own decision; `webhook enable` undoes any of them.
 */
export const DISABLED_REASONS = ['operator', 'gone', 'failing'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

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
    disabledAt: str(item.disabledAt),
    // Endpoints disabled before reasons were kept were disabled by the operator.
    disabledReason: item.disabledAt
      ? (DISABLED_REASONS as readonly unknown[]).includes(item.disabledReason)
        ? (item.disabledReason as DisabledReason)
        : 'operator'
      : null,
    failingSince: str(item.failingSince),
    previousSecret: str(item.previousSecret),
    previousSecretExpiresAt: str(item.previousSecretExpiresAt),
  };
}

function parseEvents(events: string[] | undefined): WebhookEventType[] {
  if (events === undefined) return [...DEFAULT_EVENT_TYPES];
  if (events.length === 0)
    throw new ValidationError(`events: must name at least one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  const unknown = events.filter((e) => !isWebhookEventType(e));
  if (unknown.length > 0)
    throw new ValidationError(`events: unknown event "${unknown[0]}"; one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
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
    disabledAt: null,
    disabledReason: null,
    failingSince: null,
    previousSecret: null,
    previousSecretExpiresAt: null,
  };
  await dynamo.send(
    new PutCommand({ TableName: TABLE_NAME, Item: toItem(endpoint), ConditionExpression: CONDITION.rowIsNew }),
  );
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
  const endpointRows = sortKeyStartsWith(PREFIX.webhookEndpoint);
  const items = await queryAll({
    KeyConditionExpression: `pk = :pk AND ${endpointRows.condition}`,
    ExpressionAttributeNames: endpointRows.names,
    ExpressionAttributeValues: { ':pk': tenantPk(tenantId), ...endpointRows.values },
  });
  return items.map(fromItem);
}

/** Those of `endpoints` that receive `type`: enabled, and subscribed to it. */
export const subscribedTo = (endpoints: readonly WebhookEndpoint[], type: WebhookEventType): WebhookEndpoint[] =>
  endpoints.filter((endpoint) => endpoint.disabledAt === null && endpoint.events.includes(type));

/** The tenant's endpoints that receive `type`. An organization has a handful, so one query and a filter here. */
export async function endpointsSubscribedTo(tenantId: string, type: WebhookEventType): Promise<WebhookEndpoint[]> {
  return subscribedTo(await listWebhookEndpoints(tenantId), type);
}

/** The public view of an endpoint: never a secret. */
export const publicWebhookEndpoint = ({
  id,
  url,
  events,
  createdAt,
  disabledAt,
  disabledReason,
  failingSince,
  previousSecretExpiresAt,
}: WebhookEndpoint) => ({
  id,
  url,
  events,
  createdAt,
  state: disabledAt === null ? ('enabled' as const) : ('disabled' as const),
  enabled: disabledAt === null,
  disabledAt,
  disabledReason,
  /** Since when every attempt has failed (null while the last one succeeded): disabled after 5 days of it. */
  failingSince,
  /** While a rotated-out secret still signs (null otherwise). */
  previousSecretExpiresAt,
});

/**
 * The secrets an attempt is signed with: the current one, and the one it replaced while that
 * one's grace period runs (receivers holding either can verify; internal/signing.ts says how).
 */
export function signingSecrets(endpoint: WebhookEndpoint, now: Date): { secret: string; previousSecret?: string } {
  const { secret, previousSecret, previousSecretExpiresAt } = endpoint;
  const previousStillValid =
    previousSecret !== null && previousSecretExpiresAt !== null && Date.parse(previousSecretExpiresAt) > now.getTime();
  return previousStillValid ? { secret, previousSecret } : { secret };
}

/** Removes an endpoint: no new deliveries; its queued retries end as failed (endpoint deleted). */
export async function removeWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint> {
  const endpoint = await findWebhookEndpoint(endpointId);
  try {
    await dynamo.send(
      new DeleteCommand({
        TableName: TABLE_NAME,
        Key: endpointKey(endpoint.tenantId, endpoint.id),
        ConditionExpression: CONDITION.rowExists,
      }),
    );
  } catch (err) {
    // The index lags a delete: a second removal may still find the id, but not the row.
    if (isConditionalCheckFailed(err)) throw new NotFoundError('Webhook endpoint');
    throw err;
  }
  return endpoint;
}

/**
 * Stops (or resumes) deliveries to an endpoint; disabling twice keeps the first time and reason.
 * Enabling forgets why it was disabled and its failing streak: it starts afresh.
 */
export async function setWebhookEndpointEnabled(
  endpointId: string,
  enabled: boolean,
  now = new Date(),
): Promise<WebhookEndpoint> {
  const endpoint = await findWebhookEndpoint(endpointId);
  if (enabled)
    return updateEndpoint(endpoint, 'SET disabledAt = :null, disabledReason = :null, failingSince = :null', {
      ':null': null,
    });
  const disabledAt = endpoint.disabledAt ?? nowIso(now);
  const disabledReason: DisabledReason = endpoint.disabledReason ?? 'operator';
  return updateEndpoint(endpoint, 'SET disabledAt = :disabledAt, disabledReason = :reason', {
    ':disabledAt': disabledAt,
    ':reason': disabledReason,
  });
}

/** Changes which events an endpoint receives (`webhook update --events`): from the next event on. */
export async function setWebhookEndpointEvents(endpointId: string, events: string[]): Promise<WebhookEndpoint> {
  const endpoint = await findWebhookEndpoint(endpointId);
  return updateEndpoint(endpoint, 'SET #events = :events', { ':events': parseEvents(events) }, undefined, {
    '#events': 'events',
  });
}

/**
 * The service disables an endpoint for its health (endpoint-health.ts): logged, and counted in
 * ENDPOINTS_DISABLED_METRIC. Only an enabled endpoint is disabled, so of concurrent attempts that
 * reach the same verdict one disables it, logs and counts; false for the others. For `failing`,
 * only while the streak it was judged on still stands: a success that ended it meanwhile wins.
 */
export async function disableUnhealthyEndpoint(
  endpoint: Pick<WebhookEndpoint, 'id' | 'tenantId' | 'failingSince'>,
  reason: Exclude<DisabledReason, 'operator'>,
  detail: string,
  now: Date,
): Promise<boolean> {
  const sameStreak = reason === 'failing' ? ' AND failingSince = :judged' : '';
  const disabled = await updateEndpointRow(
    endpoint,
    'SET disabledAt = :now, disabledReason = :reason',
    { ':now': nowIso(now), ':reason': reason, ':null': null, ...(sameStreak && { ':judged': endpoint.failingSince }) },
    `(attribute_not_exists(disabledAt) OR disabledAt = :null)${sameStreak}`,
  );
  if (!disabled) return false; // already disabled, removed, or healthy again
  logger.warn('Webhook endpoint disabled for its health', {
    endpointId: endpoint.id,
    tenantId: endpoint.tenantId,
    reason,
    detail,
  });
  metrics.addMetric(ENDPOINTS_DISABLED_METRIC, MetricUnit.Count, 1);
  return true;
}

/**
 * Notes the endpoint's failing streak: its start on the first failed attempt after a success (the
 * first writer wins), its end on a success. Written only when it changes, so a healthy endpoint's
 * row is not written per delivery.
 */
export async function recordEndpointStreak(
  endpoint: Pick<WebhookEndpoint, 'id' | 'tenantId'>,
  failing: boolean,
  now: Date,
): Promise<void> {
  // A failed condition: someone else noted it first, or the endpoint is gone.
  await updateEndpointRow(
    endpoint,
    'SET failingSince = :since',
    { ':since': failing ? nowIso(now) : null, ':null': null },
    failing
      ? '(attribute_not_exists(failingSince) OR failingSince = :null)'
      : 'attribute_exists(failingSince) AND failingSince <> :null',
  );
}

/**
 * One update of an existing endpoint row, under `condition` if given: the row as it left it, or
 * undefined when the row is gone or the condition failed.
 */
async function updateEndpointRow(
  endpoint: Pick<WebhookEndpoint, 'id' | 'tenantId'>,
  updateExpression: string,
  values: Record<string, unknown>,
  condition?: string,
  names?: Record<string, string>,
): Promise<Item | undefined> {
  try {
    const { Attributes } = await atSite('webhooks.endpoint', () =>
      dynamo.send(
        new UpdateCommand({
          TableName: TABLE_NAME,
          Key: endpointKey(endpoint.tenantId, endpoint.id),
          UpdateExpression: updateExpression,
          ConditionExpression: [CONDITION.rowExists, condition].filter(Boolean).join(' AND '),
          ExpressionAttributeValues: values,
          ...(names && { ExpressionAttributeNames: names }),
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return Attributes as Item;
  } catch (err) {
    if (isConditionalCheckFailed(err)) return undefined;
    throw err;
  }
}

/**
 * Issues a new secret; the current one keeps signing beside it for the grace period (0: it stops
 * at once). A second rotation inside the period drops the oldest secret: two sign, never three.
 */
export async function rotateWebhookSecret(
  endpointId: string,
  graceSeconds: number,
  now = new Date(),
): Promise<WebhookEndpoint> {
  const endpoint = await findWebhookEndpoint(endpointId);
  const expiresAt = graceSeconds > 0 ? nowIso(new Date(now.getTime() + graceSeconds * 1000)) : null;
  return updateEndpoint(
    endpoint,
    'SET secret = :secret, previousSecret = :previous, previousSecretExpiresAt = :expiresAt',
    { ':secret': generateSecret(), ':previous': expiresAt === null ? null : endpoint.secret, ':expiresAt': expiresAt },
    // Two rotations at once must not both keep the same old secret and lose one new one.
    { condition: 'secret = :expected', values: { ':expected': endpoint.secret } },
  );
}

async function updateEndpoint(
  endpoint: WebhookEndpoint,
  updateExpression: string,
  values: Record<string, unknown>,
  guard: { condition: string; values: Record<string, unknown> } = { condition: '', values: {} },
  names?: Record<string, string>,
): Promise<WebhookEndpoint> {
  const updated = await updateEndpointRow(
    endpoint,
    updateExpression,
    { ...values, ...guard.values },
    guard.condition,
    names,
  );
  if (!updated)
    throw new ValidationError(`Webhook endpoint ${endpoint.id} was removed or changed meanwhile; try again`);
  return fromItem(updated);
}
