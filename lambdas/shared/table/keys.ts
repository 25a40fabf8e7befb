/**
 * Key prefixes, defined once. Every key of organization data starts with `T#<tenantId>`, so a
 * handler that only ever builds keys from the authorizer's tenant id cannot address another
 * organization's rows. The only rows outside a tenant partition are lookup rows that exist to
 * find the tenant in the first place: API keys by hash, and (for the carrier's callbacks, which
 * name no organization) the owner of a phone number and of a provider call.
 */
export const PREFIX = {
  tenant: 'T#',
  apiKeyHash: 'KEYHASH#',
  apiKeyId: 'KEYID#',
  /** An organization's API keys (gsi3 on the key row, `T#<tenantId>#APIKEYS`): the operator's `key list`. */
  apiKeysOfTenant: 'APIKEYS',
  /** Every organization (gsi3 on the tenant row): the operator's `tenant list`. */
  tenants: 'TENANTS',
  call: 'CALL#',
  callsByDirection: 'CALLS#',
  /**
   * A contact: `T#<tenant>#CONTACT#<id>` / `CONTACT` (a partition of its own); its tombstone beside it (`TOMBSTONE`).
   */
  contact: 'CONTACT#',
  namedContacts: 'NAMED_CONTACTS',
  /** Every contact, newest first (the `directory` index): `T#<tenant>#CONTACTS`. */
  contacts: 'CONTACTS',
  /**
   * Every contact and tombstone by its last change, oldest first (the `changes` index): `T#<tenant>#CONTACT_CHANGES`.
   */
  contactChanges: 'CONTACT_CHANGES',
  /**
   * Contact search: `T#<tenant>#SEARCH#<token>` / `CONTACT#<id>`, one row per index entry of a contact
   * (contacts/search-rows.ts).
   */
  contactSearch: 'SEARCH',
  /** A number's claim (`T#<tenant>#NUMBER#<e164>` / `NUMBER`): which contact holds it. */
  numberClaim: 'NUMBER#',
  /**
   * An external id's claim (`T#<tenant>#EXTERNAL_ID#<id>` / `EXTERNAL_ID`): which contact holds it; also the
   * `externalIds` index's key.
   */
  externalIdClaim: 'EXTERNAL_ID#',
  /** Texts: message rows, one conversation per external number (gsi1), threads by last activity (gsi2). */
  message: 'MSG#',
  conversation: 'CONVERSATION',
  thread: 'THREAD#',
  threadsByActivity: 'THREADS',
  /** Carrier message sid -> message id, so status callbacks find their message. */
  messageSid: 'MSGSID#',
  /**
   * The consent ledger: one row per (organization, number), whoever holds the number (`T#<tenant>#CONSENT#<e164>` /
   * `CONSENT`).
   */
  consent: 'CONSENT#',
  /**
   * A number's consent history, in its ledger row's partition (`T#<tenant>#CONSENT#<e164>` /
   * `HISTORY#<at>#<status>#<source>`): one row per change the ledger took, newest last (consent/history.ts).
   */
  consentHistory: 'HISTORY#',
  /** The organization's spend, split over shards that each hold a slice of its limit (texting/spend.ts). */
  spendShard: 'SPEND#',
  /** POST /messages Idempotency-Key rows, written in the send transaction (texting/send-keys.ts). */
  sendKey: 'SENDKEY#',
  /**
   * Outbound texts whose carrier outcome is not known yet (gsi2 on the message row, sharded): the
   * settlement sweep's worklist across organizations, like the owner lookups below it exists to
   * find the organization of a row. Removed the moment the outcome is known.
   */
  unsettled: 'UNSETTLED#',
  /**
   * Scheduled texts by their time (gsi2 on the message row, sharded, sorted by `sendAt`): the firing's due list
   * across organizations (texting/due-list.ts). Removed when the text fires or is canceled.
   */
  due: 'DUE#',
  /**
   * A number's scheduled texts (`T#<tenant>#SCHEDULED#<e164>` / `MSG#<id>`), one row each while it is scheduled,
   * so a STOP finds them all in one strongly consistent Query (texting/due-list.ts).
   */
  scheduledTo: 'SCHEDULED#',
  /** Idempotency-Key records (Powertools rows under the tenant). */
  idempotency: 'IDEMPOTENCY',
  webhookEndpoint: 'WEBHOOK#',
  /** An endpoint's delivery log (gsi2 on the delivery rows, `T#<tenant>#DELIVERIES#<endpointId>`). */
  webhookDeliveries: 'DELIVERIES#',
  /** A delivery, a partition of its own (`T#<tenant>#DELIVERY#<id>` / `DELIVERY`). */
  webhookDelivery: 'DELIVERY#',
  /** Operator lookups by bare id (gsi1), like API keys by id: they exist to find the tenant. */
  webhookEndpointId: 'WEBHOOKID#',
  webhookDeliveryId: 'DELIVERYID#',
  rateLimit: 'RATE',
  /** Carrier: provider call sid (of the parent leg) -> call id, inside the tenant. */
  callSid: 'CALLSID#',
  /** Carrier: one voicemail per recorded call leg, keyed by that leg's provider call sid. */
  voicemail: 'VOICEMAIL#',
  /** Lookup rows outside any tenant: which organization owns a number / a provider call. */
  numberOwner: 'NUMBER_OWNER#',
  callSidOwner: 'CALLSID_OWNER#',
} as const;

/**
 * Sort keys of the rows that have a partition key of their own (`T#<tenant>#<ENTITY>#<id>`): one
 * row per partition, so each entity's writes spread over DynamoDB's partitions instead of landing
 * on the organization's (a partition-key value takes about 1,000 write units per second).
 */
export const ENTITY_SK = {
  contact: 'CONTACT',
  numberClaim: 'NUMBER',
  externalIdClaim: 'EXTERNAL_ID',
  consent: 'CONSENT',
  message: 'MESSAGE',
  messageSid: 'MSGSID',
  thread: 'THREAD',
  spendShard: 'SPEND',
  webhookDelivery: 'DELIVERY',
} as const;

export const TENANT_SK = 'TENANT';
export const API_KEY_SK = 'APIKEY';
/** Sort key of the carrier's lookup rows (`NUMBER_OWNER#<e164>`, `CALLSID_OWNER#<sid>`). */
export const OWNER_SK = 'OWNER';

export const tenantPk = (tenantId: string): string => `${PREFIX.tenant}${tenantId}`;

/** A partition key inside the tenant's space, e.g. `T#<id>#CALLS#inbound`. */
export const tenantScopedPk = (tenantId: string, ...parts: string[]): string =>
  [tenantPk(tenantId), ...parts].join('#');

export type Key = { pk: string; sk: string };

/** The key of a row with a partition of its own: `T#<tenant>#<prefix without its #>#<id>` / ENTITY_SK. */
export const ownPartitionKey = (tenantId: string, entity: keyof typeof ENTITY_SK, id: string): Key => ({
  pk: tenantScopedPk(tenantId, PREFIX[entity].slice(0, -1), id),
  sk: ENTITY_SK[entity],
});

/**
 * The key condition "sort key starts with `prefix`" (every prefix here ends in `#`), written as
 * the range `BETWEEN prefix AND successor`, where the successor is the prefix with its last
 * character raised by one (`CONTACT#` -> `CONTACT$`). DynamoDB reads the same rows and charges
 * the same for both forms; DynamoDB Local, the engine of the laptop and the tests, answers
 * `begins_with` by walking the whole partition, so a page of contacts slowed down as the
 * organization's other rows grew, while it answers a range from its index
 * (bench/probes/begins-with.ts: 27 ms vs 3.7 ms beside 100,000 other rows). The upper bound is
 * inclusive, and so would match a sort key equal to the successor itself; none exists, since no
 * key contains `$`.
 */
export function sortKeyStartsWith(
  prefix: string,
  sortKeyName = 'sk',
): { condition: string; names: Record<string, string>; values: Record<string, string> } {
  const successor = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
  return {
    condition: '#skRange BETWEEN :skFrom AND :skTo',
    names: { '#skRange': sortKeyName },
    values: { ':skFrom': prefix, ':skTo': successor },
  };
}
