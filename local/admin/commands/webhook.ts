import { z } from 'zod';
import { gracePeriod, option, parseOptions, ROTATION_GRACE, uuidPositional } from '../options';
import { defineCommand } from '../registry';
import { requireTenant } from './require-tenant';

/**
 * `webhook add|update|list|deliveries|redeliver|recover|test|...`: the portal's webhook settings and delivery log,
 * over the plain functions of local/admin/webhook-commands.ts. That module opens the table when
 * it loads, so it is imported in `run`, after the CLI has pointed TABLE_NAME at its target.
 */
const webhookCommands = () => import('../webhook-commands');

/**
 * Every event an endpoint can subscribe to; checked again (with the table's own list) when the
 * endpoint is written. Without `--events`, an endpoint gets the contract's three.
 */
const EVENTS_HELP = 'call.completed,voicemail.received,sms.received,message.delivered,message.failed';

/** `--since`: an ISO 8601 time, or how long ago (`90m`, `6h`, `2d`). */
const sinceOption = z.union([option.isoDateTime, option.duration], {
  error: 'must be an ISO 8601 date-time (2026-01-31T09:30:00Z) or how long ago (90m, 6h, 2d)',
});

const endpointIdOf = uuidPositional('endpointId');

export const webhookAdd = defineCommand({
  words: ['webhook', 'add'],
  summary: 'Register an endpoint on an approved host (tenant update --approve-host); its secret is printed once',
  usage: `--tenant <id> --url <https url> [--events <${EVENTS_HELP}>]`,
  options: { tenant: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' } },
  parse: ({ values }) =>
    parseOptions(z.object({ tenant: option.uuid, url: option.text, events: option.text.optional() }), values),
  run: async (args, { runtime }) => {
    await requireTenant(args.tenant);
    const { webhookAdd: add } = await webhookCommands();
    // http and loopback receivers only where the local runtime's sender would deliver to them.
    return add({ ...args, allowInsecureTargets: runtime?.allowHttpWebhooks === true });
  },
});

export const webhookUpdate = defineCommand({
  words: ['webhook', 'update'],
  summary: 'Change which events an endpoint receives (the whole list), from the next event on',
  usage: `--events <${EVENTS_HELP}>`,
  positionals: ['endpointId'],
  options: { events: { type: 'string' } },
  parse: (input) => {
    const o = parseOptions(z.object({ events: option.text }), input.values);
    return { endpointId: endpointIdOf(input), events: o.events };
  },
  run: async ({ endpointId, events }) => (await webhookCommands()).webhookUpdate(endpointId, { events }),
});

export const webhookRecover = defineCommand({
  words: ['webhook', 'recover'],
  summary:
    'Send again every delivery of an endpoint that ended failed since a time (same ids and bodies, oldest first; ' +
    'running it twice sends nothing twice)',
  usage: '--endpoint <id> --since <ISO time|6h|2d> [--max <n>] [--after <deliveryId>]',
  options: {
    endpoint: { type: 'string' },
    since: { type: 'string' },
    max: { type: 'string' },
    after: { type: 'string' },
  },
  parse: ({ values }) => {
    const o = parseOptions(
      z.object({
        endpoint: option.uuid,
        since: sinceOption,
        max: option.wholeNumber
          .pipe(z.number().min(1, 'must be at least 1').max(10_000, 'must be at most 10000'))
          .optional(),
        after: option.uuid.optional(),
      }),
      values,
    );
    return { endpointId: o.endpoint, since: o.since, max: o.max, after: o.after };
  },
  run: async (args) => (await webhookCommands()).webhookRecover(args),
});

export const webhookList = defineCommand({
  words: ['webhook', 'list'],
  summary: "An organization's webhook endpoints (without their secrets): state, and why the service disabled one",
  usage: '--tenant <id>',
  options: { tenant: { type: 'string' } },
  parse: ({ values }) => parseOptions(z.object({ tenant: option.uuid }), values),
  run: async (args) => {
    await requireTenant(args.tenant);
    return (await webhookCommands()).webhookList(args);
  },
});

export const webhookDeliveries = defineCommand({
  words: ['webhook', 'deliveries'],
  summary: "An endpoint's deliveries, newest first: status, attempts, next retry, last error",
  usage: '[--limit <n>]',
  positionals: ['endpointId'],
  options: { limit: { type: 'string' } },
  parse: ({ values, positionals }) => {
    const { limit } = parseOptions(
      z.object({
        limit: option.wholeNumber
          .pipe(z.number().min(1, 'must be at least 1').max(100, 'must be at most 100'))
          .optional(),
      }),
      values,
    );
    return { endpointId: endpointIdOf({ positionals }), limit };
  },
  run: async ({ endpointId, limit }) => (await webhookCommands()).webhookDeliveries(endpointId, { limit }),
});

export const webhookRedeliver = defineCommand({
  words: ['webhook', 'redeliver'],
  summary: 'Send a delivery again (same delivery id and body, attempts start over)',
  usage: '',
  positionals: ['deliveryId'],
  options: {},
  parse: uuidPositional('deliveryId'),
  run: async (deliveryId) => (await webhookCommands()).webhookRedeliver(deliveryId),
});

export const webhookTest = defineCommand({
  words: ['webhook', 'test'],
  summary: 'Send a signed webhook.test event; waits up to --wait-ms (default 20000, 0: no wait) for its first attempt',
  usage: '[--wait-ms <n>]',
  positionals: ['endpointId'],
  options: { 'wait-ms': { type: 'string' } },
  parse: ({ values, positionals }) => {
    const o = parseOptions(z.object({ 'wait-ms': option.wholeNumber.optional() }), values);
    return { endpointId: endpointIdOf({ positionals }), waitMs: o['wait-ms'] };
  },
  run: async ({ endpointId, waitMs }) => (await webhookCommands()).webhookTest(endpointId, { waitMs }),
});

export const webhookRemove = defineCommand({
  words: ['webhook', 'remove'],
  summary: 'Delete an endpoint: nothing more is delivered to it, pending retries end as failed',
  usage: '',
  positionals: ['endpointId'],
  options: {},
  parse: endpointIdOf,
  run: async (endpointId) => (await webhookCommands()).webhookRemove(endpointId),
});

export const webhookDisable = defineCommand({
  words: ['webhook', 'disable'],
  summary:
    'Stop deliveries to an endpoint: events meanwhile are not delivered to it, pending retries end as failed ' +
    '(redeliver them after enable)',
  usage: '',
  positionals: ['endpointId'],
  options: {},
  parse: endpointIdOf,
  run: async (endpointId) => (await webhookCommands()).webhookSetEnabled(endpointId, false),
});

export const webhookEnable = defineCommand({
  words: ['webhook', 'enable'],
  summary: 'Resume deliveries to a disabled endpoint, from the next event on',
  usage: '',
  positionals: ['endpointId'],
  options: {},
  parse: endpointIdOf,
  run: async (endpointId) => (await webhookCommands()).webhookSetEnabled(endpointId, true),
});

export const webhookRotateSecret = defineCommand({
  words: ['webhook', 'rotate-secret'],
  summary: `Issue a new signing secret (printed once); the old one keeps signing beside it for --grace (default ${ROTATION_GRACE.defaultText})`,
  usage: '[--grace <30m|24h|7d|0>]',
  positionals: ['endpointId'],
  options: { grace: { type: 'string' } },
  parse: (input) => {
    const o = parseOptions(z.object({ grace: gracePeriod().optional() }), input.values);
    return { endpointId: endpointIdOf(input), graceSeconds: o.grace ?? ROTATION_GRACE.defaultSeconds };
  },
  run: async ({ endpointId, graceSeconds }) => (await webhookCommands()).webhookRotateSecret(endpointId, graceSeconds),
});

export const webhookListen = defineCommand({
  words: ['webhook', 'listen'],
  summary:
    "Forward an organization's events to a local URL until Ctrl-C (local runtime with --allow-http-webhooks); one " +
    'JSON line per event',
  usage: `--tenant <id> --forward-to <url> [--events <${EVENTS_HELP}>]`,
  options: { tenant: { type: 'string' }, 'forward-to': { type: 'string' }, events: { type: 'string' } },
  parse: ({ values }) => {
    const o = parseOptions(
      z.object({ tenant: option.uuid, 'forward-to': option.httpUrl, events: option.text.optional() }),
      values,
    );
    return {
      tenant: o.tenant,
      forwardTo: o['forward-to'],
      events: o.events
        ?.split(',')
        .map((e) => e.trim())
        .filter(Boolean),
    };
  },
  run: async (args, context) => (await import('../webhook-listen')).webhookListen(args, context),
});

export const WEBHOOK_COMMANDS = [
  webhookAdd,
  webhookUpdate,
  webhookList,
  webhookDeliveries,
  webhookRedeliver,
  webhookRecover,
  webhookTest,
  webhookRemove,
  webhookDisable,
  webhookEnable,
  webhookRotateSecret,
  webhookListen,
];
