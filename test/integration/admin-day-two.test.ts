import { randomUUID } from 'node:crypto';
import { createTestTable } from '../support/table';
import { authorizeAuthorizationHeader } from '../../lambdas/contexts/tenants/auth';
import { createApiKey } from '../../lambdas/contexts/tenants/api-keys';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import {
  addWebhookEndpoint,
  endpointsSubscribedTo,
  findWebhookEndpoint,
  signingSecrets,
} from '../../lambdas/contexts/webhooks/endpoints';
import { deliveryHeaders } from '../../lambdas/contexts/webhooks/internal/signing';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import { keyList, keyRotate } from '../../local/admin/commands/key';
import { tenantCreate, tenantList, tenantShow, tenantUpdate } from '../../local/admin/commands/tenant';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { segmentsOf } from '../../lambdas/contexts/texting/billing';
import type { Carrier } from '../../lambdas/contexts/texting/carrier-port';
import { moneyLedgerOf } from '../support/ledger';
import { webhookDisable, webhookEnable, webhookRemove, webhookRotateSecret } from '../../local/admin/commands/webhook';
import type { AdminCommand } from '../../local/admin/registry';
import { UnflushedChangeError } from '../../local/admin/authorizer-cache';

/** The operator CLI's day-two commands on DynamoDB Local, parsed and run as `npm run admin` would. */
jest.setTimeout(30_000);
const context = { stateDir: '.local', runtime: undefined, emit: () => undefined, signal: new AbortController().signal };
/* eslint-disable @typescript-eslint/no-explicit-any -- a command of any options, run as the CLI runs it */
const run = async (
  command: AdminCommand<any>,
  positionals: string[],
  values: Record<string, string> = {},
): Promise<any> => command.run(command.parse({ values, positionals }), context);
/* eslint-enable @typescript-eslint/no-explicit-any */

/**
 * No stack or runtime serves this test's table, so a command that takes access away makes its
 * change, then fails for want of a cache to flush, with what it made in the error's document.
 */
/* eslint-disable-next-line @typescript-eslint/no-explicit-any -- the document of any command */
const unflushed = async (command: Promise<unknown>): Promise<any> => {
  const err = await command.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UnflushedChangeError);
  expect((err as Error).message).toMatch(/no authorizer cache was flushed .* authorizer flush/);
  return (err as UnflushedChangeError).document;
};

const HOUR_MS = 3_600_000;
let tenantId: string;

beforeAll(async () => {
  await createTestTable();
  tenantId = (await createTenant({ name: 'Day Two Org' })).id;
}, 60_000);

describe('tenant list and show', () => {
  it('lists every organization and shows one with its keys and endpoints, never a key or secret', async () => {
    // Prepare
    const other = await createTenant({ name: 'Second Org' });
    const { key } = await createApiKey({ tenantId: other.id, name: 'ci' });
    // Act
    const { tenants } = await run(tenantList, []);
    const shown = await run(tenantShow, [other.id]);
    // Assess
    expect(tenants.map((t: { id: string }) => t.id)).toEqual(expect.arrayContaining([tenantId, other.id]));
    expect(shown.tenant).toMatchObject({ id: other.id, name: 'Second Org' });
    expect(shown.apiKeys).toEqual([expect.objectContaining({ name: 'ci', state: 'active', replacedBy: null })]);
    expect(JSON.stringify(shown)).not.toContain(key);
  });
});

describe('the SMS rate of an organization', () => {
  const accepting: Carrier = {
    name: 'loopback',
    send: async () => ({ messageSid: `SM${randomUUID().replace(/-/g, '')}` }),
  };
  const twoSegments = 'x'.repeat(161);

  it('prices each text at its segments x the rate the CLI set, the default 1 cent until then, and shows the rate', async () => {
    // Prepare: an organization created with the CLI without a rate, and its first text
    const { tenant } = await run(tenantCreate, [], { name: 'Rated Org', 'sms-number': '+16285559001' });
    await sendMessage(tenant.id, { to: '+14155550199', body: twoSegments }, accepting);
    const atDefault = await moneyLedgerOf(tenant.id);
    // Act: a rate set with the CLI, then two more texts (two segments, one)
    const updated = await run(tenantUpdate, [tenant.id], { 'sms-rate-cents': '7' });
    await sendMessage(tenant.id, { to: '+14155550199', body: twoSegments }, accepting);
    await sendMessage(tenant.id, { to: '+14155550199', body: 'one segment' }, accepting);
    const shown = await run(tenantShow, [tenant.id]);
    // Assess
    expect(segmentsOf(twoSegments).segments).toBe(2);
    expect(tenant.smsRateCents).toBe(1);
    expect(atDefault).toEqual({ spendCents: 2, owedCents: 2 });
    expect(updated.tenant.smsRateCents).toBe(7);
    expect(shown.tenant).toMatchObject({ smsRateCents: 7, spendCents: 2 + 2 * 7 + 7 });
    expect(await moneyLedgerOf(tenant.id)).toEqual({ spendCents: 23, owedCents: 23 });
  });

  it('is set at creation with --sms-rate-cents', async () => {
    const { tenant } = await run(tenantCreate, [], {
      name: 'Pricey Org',
      'sms-number': '+16285559002',
      'sms-rate-cents': '4',
    });

    await sendMessage(tenant.id, { to: '+14155550199', body: twoSegments }, accepting);

    expect(tenant.smsRateCents).toBe(4);
    expect(await moneyLedgerOf(tenant.id)).toEqual({ spendCents: 8, owedCents: 8 });
  });
});

describe('key rotate', () => {
  it('issues a new key and lets the old one work until the grace period ends, then refuses it', async () => {
    // Prepare
    const { key: oldKey, apiKey } = await createApiKey({ tenantId, name: 'server', scopes: ['sms.view'] });
    // Act
    const rotated = await unflushed(run(keyRotate, [apiKey.id], { grace: '1h' }));
    const { apiKeys } = await run(keyList, [], { tenant: tenantId });
    // Assess
    expect(rotated.apiKey).toMatchObject({ name: 'server', scopes: ['sms.view'] });
    expect(rotated.replaced).toMatchObject({ id: apiKey.id, state: 'rotating_out', replacedBy: rotated.apiKey.id });
    const graceEnd = Date.parse(rotated.replaced.expiresAt);
    expect((await authorizeAuthorizationHeader(`Bearer ${oldKey}`, new Date(graceEnd - 1000))).effect).toBe('allow');
    expect((await authorizeAuthorizationHeader(`Bearer ${oldKey}`, new Date(graceEnd))).effect).toBe('deny');
    expect((await authorizeAuthorizationHeader(`Bearer ${rotated.key}`, new Date(graceEnd + HOUR_MS))).effect).toBe(
      'allow',
    );
    expect(apiKeys.map((k: { id: string }) => k.id)).toEqual(expect.arrayContaining([apiKey.id, rotated.apiKey.id]));
  });

  it('refuses to rotate a key twice, so one key never has two successors', async () => {
    // Prepare
    const { apiKey } = await createApiKey({ tenantId });
    await unflushed(run(keyRotate, [apiKey.id], {}));
    // Act
    const again = run(keyRotate, [apiKey.id], {});
    // Assess
    await expect(again).rejects.toThrow(/already rotated to .*; rotate that one/);
  });

  it('refuses a grace period longer than a week, naming the option', () => {
    expect(() =>
      keyRotate.parse({ values: { grace: '8d' }, positionals: ['0199a000-0000-7000-8000-0000000000aa'] }),
    ).toThrow('--grace: must be at most 7 days');
  });
});

describe('webhook remove, disable, enable and rotate-secret', () => {
  const approve = async () => {
    const { updateTenant } = await import('../../lambdas/contexts/tenants/tenants');
    await updateTenant(tenantId, { approveHosts: ['hooks.example.com'] });
  };

  it('stops routing events to a disabled endpoint until it is enabled, and forgets a removed one', async () => {
    // Prepare
    await approve();
    const endpoint = await addWebhookEndpoint(tenantId, {
      url: 'https://hooks.example.com/a',
      events: ['sms.received'],
    });
    const subscribed = async () => (await endpointsSubscribedTo(tenantId, 'sms.received')).map((e) => e.id);
    // Act
    const disabled = await run(webhookDisable, [endpoint.id]);
    const whileDisabled = await subscribed();
    const enabled = await run(webhookEnable, [endpoint.id]);
    const whileEnabled = await subscribed();
    await run(webhookRemove, [endpoint.id]);
    // Assess
    expect(disabled.endpoint).toMatchObject({ enabled: false, disabledAt: expect.any(String) });
    expect(whileDisabled).not.toContain(endpoint.id);
    expect(enabled.endpoint).toMatchObject({ enabled: true, disabledAt: null });
    expect(whileEnabled).toContain(endpoint.id);
    expect(await subscribed()).not.toContain(endpoint.id);
  });

  it('signs with both secrets during the grace period: old-secret receivers verify the spec headers, new-secret ones the standard header', async () => {
    // Prepare
    await approve();
    const endpoint = await addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/b' });
    // Act
    const { secret: newSecret, endpoint: shown } = await run(webhookRotateSecret, [endpoint.id], { grace: '24h' });
    const stored = await findWebhookEndpoint(endpoint.id);
    const body = '{"id":"evt"}';
    const sign = (at: number) =>
      deliveryHeaders({
        ...signingSecrets(stored, new Date(at)),
        deliveryId: 'd1',
        eventType: 'sms.received',
        body,
        nowMs: at,
      });
    const during = sign(Date.now());
    const after = sign(Date.parse(shown.previousSecretExpiresAt) + 1000);
    // Assess
    expect(newSecret).not.toBe(endpoint.secret);
    expect(during['webhook-signature'].split(' ')).toHaveLength(2);
    expect(verifyDelivery(during, body, endpoint.secret)).toEqual({ ok: true });
    expect(verifyDelivery(during, body, [newSecret, endpoint.secret])).toEqual({ ok: true });
    expect(after['webhook-signature'].split(' ')).toHaveLength(1);
    expect(verifyDelivery(after, body, newSecret, Number(after['X-Service-Timestamp']))).toEqual({ ok: true });
    expect(verifyDelivery(after, body, endpoint.secret, Number(after['X-Service-Timestamp']))).toEqual({
      ok: false,
      reason: 'bad_signature',
    });
  });
});
