import {
  addWebhookEndpoint,
  listWebhookEndpoints,
  publicWebhookEndpoint,
  removeWebhookEndpoint,
  rotateWebhookSecret,
  setWebhookEndpointEnabled,
  setWebhookEndpointEvents,
} from '../../lambdas/contexts/webhooks/endpoints';
import {
  getDeliveryView,
  listDeliveries,
  recoverFailedDeliveries,
  redeliver,
  sendTestEvent,
} from '../../lambdas/contexts/webhooks/operator';
import type { DeliveryView } from '../../lambdas/contexts/webhooks/deliveries';

/**
 * The operator CLI's `webhook` commands (bin/admin.ts registers them). Each returns the JSON
 * document the command prints. They work on the table directly; queueing happens in the
 * pipeline (local runtime or AWS), which sees the row changes on the stream.
 */
export type WebhookAddArgs = {
  tenant: string;
  url: string;
  /**
   * Comma-separated event names; the contract's three (call.completed, voicemail.received, sms.received) when omitted.
   */
  events?: string;
  /** Local runtime only: http and loopback receivers. */
  allowInsecureTargets?: boolean;
};

const splitList = (value: string | undefined): string[] | undefined =>
  value === undefined
    ? undefined
    : value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

/** `webhook add --tenant <id> --url <url> [--events a,b]`: the secret is shown here only. */
export async function webhookAdd(args: WebhookAddArgs) {
  const endpoint = await addWebhookEndpoint(
    args.tenant,
    { url: args.url, events: splitList(args.events) },
    { allowInsecureTargets: args.allowInsecureTargets },
  );
  return { endpoint: publicWebhookEndpoint(endpoint), secret: endpoint.secret };
}

/** `webhook list --tenant <id>`: the organization's endpoints, without secrets. */
export async function webhookList(args: { tenant: string }) {
  const endpoints = await listWebhookEndpoints(args.tenant);
  return { endpoints: endpoints.map(publicWebhookEndpoint) };
}

/** `webhook update <endpointId> --events a,b`: the endpoint's new list of events. */
export async function webhookUpdate(endpointId: string, args: { events: string }) {
  return { endpoint: publicWebhookEndpoint(await setWebhookEndpointEvents(endpointId, splitList(args.events) ?? [])) };
}

/**
 * `webhook recover --endpoint <id> --since <time>`: what was queued again, oldest first, and
 * where to go on when the run stopped at `--max`. `since` is an ISO time or seconds ago.
 */
export async function webhookRecover(args: {
  endpointId: string;
  since: string | number;
  max?: number;
  after?: string;
}) {
  const now = new Date();
  const since = typeof args.since === 'number' ? new Date(now.getTime() - args.since * 1000) : new Date(args.since);
  const summary = await recoverFailedDeliveries(args.endpointId, since, { now, max: args.max, after: args.after });
  return { recovered: { ...summary, queuedCount: summary.queued.length } };
}

/** `webhook remove <endpointId>`: its pending retries end as failed, its delivery log stays until it expires. */
export async function webhookRemove(endpointId: string) {
  return { endpoint: publicWebhookEndpoint(await removeWebhookEndpoint(endpointId)), removed: true };
}

/** `webhook disable|enable <endpointId>`. */
export async function webhookSetEnabled(endpointId: string, enabled: boolean) {
  return { endpoint: publicWebhookEndpoint(await setWebhookEndpointEnabled(endpointId, enabled)) };
}

/** `webhook rotate-secret <endpointId>`: the new secret is shown here only. */
export async function webhookRotateSecret(endpointId: string, graceSeconds: number) {
  const endpoint = await rotateWebhookSecret(endpointId, graceSeconds);
  return { endpoint: publicWebhookEndpoint(endpoint), secret: endpoint.secret };
}

/** `webhook deliveries <endpointId> [--limit n]`: newest first. */
export async function webhookDeliveries(endpointId: string, options: { limit?: number } = {}) {
  return { deliveries: await listDeliveries(endpointId, options.limit ?? 50) };
}

/** `webhook redeliver <deliveryId>`: a new attempt cycle, same delivery id and body. */
export async function webhookRedeliver(deliveryId: string) {
  return { delivery: await redeliver(deliveryId) };
}

export type WebhookTestOptions = {
  /** How long to wait for the first attempt's outcome; 0 returns at once (status pending). */
  waitMs?: number;
  pollMs?: number;
};

/**
 * `webhook test <endpointId>`: sends a signed `webhook.test` event and, by default, waits for
 * the first attempt (a 10 s attempt timeout plus queueing fits in the default wait).
 */
export async function webhookTest(endpointId: string, options: WebhookTestOptions = {}) {
  const waitMs = options.waitMs ?? 20_000;
  const pollMs = options.pollMs ?? 250;
  let delivery: DeliveryView = await sendTestEvent(endpointId);
  const deadline = Date.now() + waitMs;
  while (delivery.attempts === 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    // The id lookup index lags the write briefly; not found yet means not attempted yet.
    delivery = await getDeliveryView(delivery.id).catch(() => delivery);
  }
  return { delivery };
}
