import { z } from 'zod';
import type { TenantInput, TenantUpdate } from '../../../lambdas/contexts/tenants/tenants';
import { UsageError } from '../../usage-error';
import { flushAfter } from '../authorizer-cache';
import { option, parseOptions, uuidPositional } from '../options';
import { defineCommand, type OptionSpecs } from '../registry';
import { describeKeysOf } from './key';
import { DEFAULT_SMS_RATE_CENTS } from '../../../lambdas/contexts/tenants/sms-rate';
import type { OrganizationQuietHours } from '../../../lambdas/contexts/tenants/quiet-hours-policy';

/** `tenant create` and `tenant update`: what the portal's organization settings do. */
const SHARED_OPTIONS = {
  slug: { type: 'string' },
  plan: { type: 'string' },
  'sms-number': { type: 'string' },
  'billing-status': { type: 'string' },
  'spending-limit-cents': { type: 'string' },
  'sms-rate-cents': { type: 'string' },
  'quiet-hours': { type: 'string' },
  'quiet-hours-applies-to': { type: 'string' },
  'quiet-hours-window': { type: 'string' },
  // The organization's voice numbers: carrier callbacks find the organization by them.
  number: { type: 'string', multiple: true },
} as const satisfies OptionSpecs;

const sharedFields = {
  slug: option.slug.optional(),
  plan: option.plan.optional(),
  'sms-number': option.e164.optional(),
  'billing-status': option.billingStatus.optional(),
  'spending-limit-cents': option.wholeNumber.optional(),
  'sms-rate-cents': option.smsRateCents.optional(),
  'quiet-hours': option.quietHours.optional(),
  'quiet-hours-applies-to': option.quietHoursAppliesTo.optional(),
  'quiet-hours-window': option.quietHoursWindow.optional(),
  number: z.array(option.e164).optional(),
};

type SharedValues = {
  'quiet-hours'?: OrganizationQuietHours['mode'];
  'quiet-hours-applies-to'?: OrganizationQuietHours['appliesTo'];
  'quiet-hours-window'?: OrganizationQuietHours['window'];
};

/** The parts of the quiet-hours policy the options name (undefined when none: the policy is left as it is). */
function quietHoursOf(o: SharedValues): Partial<OrganizationQuietHours> | undefined {
  const policy = {
    ...(o['quiet-hours'] && { mode: o['quiet-hours'] }),
    ...(o['quiet-hours-applies-to'] && { appliesTo: o['quiet-hours-applies-to'] }),
    ...(o['quiet-hours-window'] && { window: o['quiet-hours-window'] }),
  };
  return Object.keys(policy).length > 0 ? policy : undefined;
}

const SHARED_USAGE =
  '[--slug <s>] [--plan starter|pro|business] [--sms-number <e164>] [--billing-status active|past_due|suspended] ' +
  '[--spending-limit-cents <n>] [--sms-rate-cents <n>] [--quiet-hours off|refuse|defer] ' +
  '[--quiet-hours-applies-to all|marketing] [--quiet-hours-window HH:MM-HH:MM] [--number <e164>]...';

export const tenantCreate = defineCommand({
  words: ['tenant', 'create'],
  summary: `Create an organization (default plan pro, billing active, ${DEFAULT_SMS_RATE_CENTS} cent a text segment); --number (repeatable) registers its numbers`,
  usage: `--name <s> ${SHARED_USAGE}`,
  options: { name: { type: 'string' }, ...SHARED_OPTIONS },
  parse: ({ values }): TenantInput => {
    const o = parseOptions(z.object({ name: option.text, ...sharedFields }), values);
    return {
      name: o.name,
      slug: o.slug,
      plan: o.plan,
      smsNumber: o['sms-number'],
      billingStatus: o['billing-status'],
      spendingLimitCents: o['spending-limit-cents'],
      smsRateCents: o['sms-rate-cents'],
      quietHours: quietHoursOf(o),
      // The SMS number is one of the numbers either way (createTenant adds it).
      numbers: o.number,
    };
  },
  run: async (input) => {
    const { createTenant } = await import('../../../lambdas/contexts/tenants/tenants');
    const { settleSpend } = await import('../../../lambdas/contexts/texting/spend');
    const tenant = await createTenant(input);
    // Its spend shards, with the limit split over them, before its first send.
    await settleSpend(tenant.id);
    return { tenant };
  },
});

export const tenantUpdate = defineCommand({
  words: ['tenant', 'update'],
  summary:
    'Change an organization; --number (adds a number) and --approve-host may be repeated; a new plan, name, slug or ' +
    'quiet-hours option flushes the authorizer cache',
  usage: `[--name <s>] ${SHARED_USAGE} [--no-sms-number] [--approve-host <host>]...`,
  positionals: ['tenantId'],
  options: {
    name: { type: 'string' },
    ...SHARED_OPTIONS,
    'no-sms-number': { type: 'boolean' },
    'approve-host': { type: 'string', multiple: true },
  },
  parse: ({ values, positionals }): { tenantId: string; change: TenantUpdate } => {
    const tenantId = uuidPositional('tenantId')({ positionals });
    const o = parseOptions(
      z.object({
        name: option.text.optional(),
        ...sharedFields,
        'no-sms-number': z.boolean().optional(),
        'approve-host': z.array(option.host).optional(),
      }),
      values,
    );
    if (o['no-sms-number'] && o['sms-number'])
      throw new UsageError('--sms-number and --no-sms-number cannot be used together');
    const change: TenantUpdate = {
      name: o.name,
      slug: o.slug,
      plan: o.plan,
      smsNumber: o['no-sms-number'] ? null : o['sms-number'],
      billingStatus: o['billing-status'],
      spendingLimitCents: o['spending-limit-cents'],
      smsRateCents: o['sms-rate-cents'],
      quietHours: quietHoursOf(o),
      approveHosts: o['approve-host'],
      addNumbers: o.number,
    };
    if (Object.values(change).every((value) => value === undefined))
      throw new UsageError('nothing to change: give at least one option');
    return { tenantId, change };
  },
  run: async ({ tenantId, change }, context) => {
    const { updateTenant } = await import('../../../lambdas/contexts/tenants/tenants');
    const { settleSpend } = await import('../../../lambdas/contexts/texting/spend');
    const tenant = await updateTenant(tenantId, change);
    // The authorizer's cached decisions carry the plan (API access), name, slug and quiet hours (GET /me) of the
    // organization: a change of one of them applies from the next request on, not after the TTL.
    const flushes = [change.plan, change.name, change.slug, change.quietHours].some((value) => value !== undefined);
    let flushed: object | undefined;
    try {
      // A new limit is split over the spend shards now, by this one writer, rather than by the
      // organization's next sends (which would, should this command stop before it).
      if (change.spendingLimitCents !== undefined) await settleSpend(tenantId);
    } finally {
      // Whatever the settlement did: a plan change left unflushed would keep admitting the old access.
      if (flushes) flushed = await flushAfter(`Organization ${tenantId} is changed in the table`, context, { tenant });
    }
    return flushed ?? { tenant };
  },
});

export const tenantList = defineCommand({
  words: ['tenant', 'list'],
  summary: 'Every organization, oldest first',
  usage: '',
  options: {},
  parse: () => undefined,
  run: async () => {
    const { listTenants } = await import('../../../lambdas/contexts/tenants/tenants');
    return { tenants: await listTenants() };
  },
});

export const tenantShow = defineCommand({
  words: ['tenant', 'show'],
  summary:
    'One organization (its SMS rate, limit and spend among its settings) with its API keys and webhook endpoints ' +
    '(never a key or a secret)',
  usage: '',
  positionals: ['tenantId'],
  options: {},
  parse: uuidPositional('tenantId'),
  run: async (tenantId) => {
    const [{ getTenant }, { listWebhookEndpoints, publicWebhookEndpoint }, { spendOf }] = await Promise.all([
      import('../../../lambdas/contexts/tenants/tenants'),
      import('../../../lambdas/contexts/webhooks/endpoints'),
      import('../../../lambdas/contexts/texting/spend'),
    ]);
    const tenant = await getTenant(tenantId);
    if (!tenant) throw new Error(`No organization with id ${tenantId}`);
    const [apiKeys, endpoints, spendCents] = await Promise.all([
      describeKeysOf(tenantId),
      listWebhookEndpoints(tenantId),
      spendOf(tenantId),
    ]);
    return { tenant: { ...tenant, spendCents }, apiKeys, webhookEndpoints: endpoints.map(publicWebhookEndpoint) };
  },
});
