import { createHash } from 'node:crypto';

/**
 * The API Gateway API keys that meter service keys in the stage's usage plan. API Gateway allows
 * 10,000 API keys per account and region, and that quota cannot be raised, so a service key does
 * not get one of its own: the stack creates a fixed number of usage-plan keys, the buckets, and
 * the authorizer names (`usageIdentifierKey`) the bucket a hash of the service key's id chooses.
 * Any number of service keys then costs the account the same few API Gateway keys, and issuing or
 * revoking a key creates or deletes none. The per-key limits live elsewhere: exact in the
 * handlers (120 a minute), at the edge in WAF (docs/decisions.md, "Keys without a ceiling").
 *
 * No imports but node:crypto: the CDK app (which creates the buckets) and the authorizer (which names
 * them) share it.
 */
export type UsagePlanBuckets = {
  /** What every bucket's value starts with; unique to the stack (see `usagePlanKeyPrefixOf`). */
  prefix: string;
  /** How many buckets (usage-plan keys) the stack made. */
  count: number;
};

/** Read by the authorizer (lambdas/handlers/authorizer/handler.ts), written by the CDK and the local runtime. */
export const USAGE_PLAN_KEY_PREFIX_ENV = 'USAGE_PLAN_KEY_PREFIX';
export const USAGE_PLAN_BUCKETS_ENV = 'USAGE_PLAN_BUCKETS';

/**
 * 100 keys of the account's 10,000 per stage: room for a hundred stages and other APIs. One key
 * flooding past its limit can hold its bucket's throttle until WAF blocks it, so the count bounds
 * how many other keys it slows meanwhile: 1 % of them (docs/capacity.md, "Noisy neighbours"). Each
 * bucket is two CloudFormation resources, in a nested stack of their own
 * (lib/constructs/usage-plan-buckets.ts), whose 500 bound the maximum.
 */
export const DEFAULT_USAGE_PLAN_BUCKETS = 100;
export const MAX_USAGE_PLAN_BUCKETS = 240;

/**
 * API Gateway wants a value of 20 to 128 characters, and the documentation calls it alphanumeric:
 * `cctusage` + 12 hex characters of the stack name's SHA-256 (so two stacks of one account, whose
 * names differ, never make the same value) + the bucket number, 3 digits: 23 characters.
 */
export const usagePlanKeyPrefixOf = (stackName: string): string =>
  `cctusage${createHash('sha256').update(stackName).digest('hex').slice(0, 12)}`;

export const usagePlanKeyValue = (prefix: string, bucket: number): string =>
  `${prefix}${String(bucket).padStart(3, '0')}`;

/** Every bucket's value, bucket 0 first. */
export const usagePlanKeyValues = ({ prefix, count }: UsagePlanBuckets): string[] =>
  Array.from({ length: count }, (_, bucket) => usagePlanKeyValue(prefix, bucket));

/**
 * The bucket of a service key: its id hashed, so keys spread evenly whatever their ids look like
 * (UUIDv7 ids begin with their creation time), and a key stays in its bucket for life.
 */
export const usagePlanBucketOf = (keyId: string, count: number): number =>
  createHash('sha256').update(keyId).digest().readUInt32BE(0) % count;

/** The usage-plan key the authorizer returns for a service key. */
export const usagePlanKeyFor = (keyId: string, buckets: UsagePlanBuckets): string =>
  usagePlanKeyValue(buckets.prefix, usagePlanBucketOf(keyId, buckets.count));
