import { z } from 'zod';
import { flushAfter, type AuthorizerCacheOutcome } from '../authorizer-cache';
import { parseOptions } from '../options';
import { defineCommand, type CommandContext } from '../registry';
import { appliedTarget, type DeployedStack } from '../target';

/** Lambda's timeout of the authorizer (lib/constructs/public-api.ts) and a second: no invocation started earlier is still running after it. */
export const AUTHORIZER_SETTLE_MS = 6_000;

/** DeleteApiKey is limited to 5 requests a second per account (not raisable): 5 at a time, a second apart. */
const DELETES_PER_SECOND = 5;

export type MigrationReport = {
  /** API keys of the usage plan made for single service keys (`usage-<key id>`). */
  perKeyApiKeys: number;
  /** Of their service keys, those now metered by their bucket; the rest have no row any more. */
  movedToBuckets: number;
  withoutKeyRow: number;
  authorizerCache: AuthorizerCacheOutcome | null;
  deleted: number;
  dryRun: boolean;
};

export type MigrationDeps = {
  sleep: (ms: number) => Promise<void>;
  /** Progress for the operator (stderr), every few hundred deletions. */
  progress: (line: string) => void;
};

/**
 * From one API Gateway key per service key to the stack's buckets, without refusing a request:
 * 1. (the deploy made the buckets; every key issued since names its bucket)
 * 2. each service key that has its own API key is moved to its bucket in the table;
 * 3. after any authorizer invocation that read a key before the move has ended, the stage's
 *    authorizer cache is flushed: from then on no decision names an own API key;
 * 4. the own API keys are deleted, at the rate API Gateway allows.
 * Idempotent and resumable: run it again and it finds what is left.
 */
export async function migrateToUsagePlanBuckets(
  stack: DeployedStack,
  context: Pick<CommandContext, 'runtime'>,
  { dryRun }: { dryRun: boolean },
  deps: MigrationDeps,
): Promise<MigrationReport> {
  const { keyIdOfLegacyUsagePlanKey, usagePlanKeyPrefixOf } = await import('../../../lambdas/handlers/authorizer/usage-plan-keys');
  const { moveToUsagePlanBucket } = await import('../../../lambdas/contexts/tenants/api-keys');
  const apiKeys = await stack.aws.usagePlanApiKeys(stack.usagePlanId);
  // Moving a key to a bucket that is not in the usage plan would have API Gateway refuse it.
  const bucketPrefix = usagePlanKeyPrefixOf(stack.name);
  if (!apiKeys.some((apiKey) => apiKey.value.startsWith(bucketPrefix))) {
    throw new Error(`The usage plan of stack ${stack.name} has no buckets yet: deploy this version of the stack first (docs/deploy.md)`);
  }
  const perKey = apiKeys.flatMap((apiKey) => {
    const keyId = keyIdOfLegacyUsagePlanKey(apiKey.name);
    return keyId ? [{ apiKeyId: apiKey.id, keyId }] : [];
  });
  const report: MigrationReport = { perKeyApiKeys: perKey.length, movedToBuckets: 0, withoutKeyRow: 0, authorizerCache: null, deleted: 0, dryRun };
  if (dryRun || perKey.length === 0) return report;

  for (const { keyId } of perKey) {
    if (await moveToUsagePlanBucket(keyId)) report.movedToBuckets += 1;
    else report.withoutKeyRow += 1;
  }
  await deps.sleep(AUTHORIZER_SETTLE_MS);
  report.authorizerCache = await flushAfter(`${report.movedToBuckets} keys were moved to their usage-plan buckets (no API key deleted yet: run the command again)`, context);

  for (let start = 0; start < perKey.length; start += DELETES_PER_SECOND) {
    if (start > 0) await deps.sleep(1_000);
    await Promise.all(perKey.slice(start, start + DELETES_PER_SECOND).map(({ apiKeyId }) => stack.aws.deleteApiKey(apiKeyId)));
    report.deleted += Math.min(DELETES_PER_SECOND, perKey.length - start);
    if (report.deleted % 500 === 0) deps.progress(`deleted ${report.deleted} of ${perKey.length} per-key API keys`);
  }
  return report;
}

export const usagePlanMigrate = defineCommand({
  words: ['usage-plan', 'migrate'],
  summary: 'Once per stage deployed before usage-plan buckets (--stack): move its keys to their buckets, flush the authorizer cache, delete the per-key API keys',
  usage: '[--dry-run]',
  options: { 'dry-run': { type: 'boolean' } },
  parse: ({ values }) => parseOptions(z.object({ 'dry-run': z.boolean().optional() }), values),
  run: async (options, context) => {
    const stack = appliedTarget()?.stack;
    if (!stack) throw new Error('usage-plan migrate works on a deployed stack: give --stack <name> [--region <r>]');
    return migrateToUsagePlanBuckets(stack, context, { dryRun: options['dry-run'] ?? false }, {
      sleep: (ms) => new Promise((wake) => setTimeout(wake, ms)),
      progress: (line) => process.stderr.write(`${line}\n`),
    });
  },
});
