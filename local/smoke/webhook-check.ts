import { applyTarget, resolveTarget } from '../admin/target';
import { must } from './client';
import { needs, type Check } from './check';
import type { SmokeOptions } from './options';

/**
 * `--webhook-endpoint <url|id>`: a signed `webhook.test` event to one of the key's organization's
 * endpoints, through the deployment's own pipeline (the table -> stream -> router -> queue ->
 * sender, in AWS or in the local runtime). The public API has no webhook operations, so this part
 * needs operator access, found as `npm run admin` finds it (--state-dir or --stack).
 */

/** The spec's 10 s attempt plus up to a minute of queueing in AWS. */
const FIRST_ATTEMPT_WAIT_MS = 75_000;

export function webhookTestCheck(endpoint: string, operator: SmokeOptions['operator']): Check {
  return {
    name: `webhook.test to ${endpoint}`,
    async run(ctx) {
      const tenantId = needs(ctx.me?.tenant?.id, "the key's organization from GET /me");
      applyTarget(await resolveTarget(operator));
      // Imported only now: the domain modules read the table's name when first imported.
      const { listWebhookEndpoints } = await import('../../lambdas/contexts/webhooks/endpoints');
      const { webhookTest } = await import('../admin/webhook-commands');
      const endpoints = await listWebhookEndpoints(tenantId);
      const target = endpoints.find((e) => e.url === endpoint || e.id === endpoint);
      must(
        target,
        `no webhook endpoint of organization ${tenantId} has the URL or id ${endpoint} (npm run admin -- webhook ` +
          `list --tenant ${tenantId})`,
      );
      const { delivery } = await webhookTest(target.id, { waitMs: FIRST_ATTEMPT_WAIT_MS });
      must(
        delivery.attempts > 0,
        `delivery ${delivery.id}: not attempted within ${FIRST_ATTEMPT_WAIT_MS / 1000} s (is the pipeline running?)`,
      );
      must(
        delivery.status === 'succeeded',
        `delivery ${delivery.id}: ${delivery.status} after attempt ${delivery.attempts}: ` +
          `${delivery.lastError ?? 'no error recorded'}`,
      );
      return `delivery ${delivery.id} to ${target.url} succeeded on attempt ${delivery.attempts}`;
    },
  };
}
