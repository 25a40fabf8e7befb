import { createTestTable } from '../support/table';
import { NotFoundError, ValidationError } from '../../lambdas/shared/errors';
import { uuidv7 } from '../../lambdas/shared/ids';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import {
  addWebhookEndpoint,
  disableUnhealthyEndpoint,
  endpointsSubscribedTo,
  findWebhookEndpoint,
  getWebhookEndpoint,
  listWebhookEndpoints,
  recordEndpointStreak,
} from '../../lambdas/contexts/webhooks/endpoints';
import { ENDPOINTS_DISABLED_METRIC } from '../../lambdas/contexts/webhooks/health-metrics';
import { metrics } from '../../lambdas/shared/aws';
import { webhookAdd, webhookList, webhookUpdate } from '../../local/admin/webhook-commands';

let tenantId: string;
let otherTenantId: string;

beforeAll(async () => {
  await createTestTable();
  tenantId = (await createTenant({ name: 'Endpoint Org' })).id;
  otherTenantId = (await createTenant({ name: 'Other Org' })).id;
  await updateTenant(tenantId, { approveHosts: ['Hooks.Example.com', '127.0.0.1'] });
});

describe('registering an endpoint', () => {
  it('stores an https endpoint on an approved host with all events and a fresh secret', async () => {
    // Act
    const endpoint = await addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/in' });

    // Assess
    expect(endpoint).toMatchObject({
      tenantId,
      url: 'https://hooks.example.com/in',
      events: ['call.completed', 'voicemail.received', 'sms.received'],
    });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(await getWebhookEndpoint(tenantId, endpoint.id)).toEqual(endpoint);
    expect(await findWebhookEndpoint(endpoint.id)).toEqual(endpoint);
  });

  it('refuses plain http, hosts the organization has not approved, and unknown events', async () => {
    await expect(addWebhookEndpoint(tenantId, { url: 'http://hooks.example.com/in' })).rejects.toThrow(
      'url: must use https',
    );
    await expect(addWebhookEndpoint(tenantId, { url: 'https://attacker.example.net/in' })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(addWebhookEndpoint(otherTenantId, { url: 'https://hooks.example.com/in' })).rejects.toThrow(
      'not approved',
    );
    await expect(
      addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/in', events: ['call.started'] }),
    ).rejects.toThrow('events: unknown event "call.started"');
    await expect(addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/in', events: [] })).rejects.toThrow(
      'at least one',
    );
  });

  it('accepts an http loopback receiver only with allowInsecureTargets', async () => {
    await expect(addWebhookEndpoint(tenantId, { url: 'http://127.0.0.1:9/h' })).rejects.toThrow(ValidationError);
    await expect(addWebhookEndpoint(tenantId, { url: 'https://127.0.0.1:9/h' })).rejects.toThrow('loopback');

    const local = await addWebhookEndpoint(tenantId, { url: 'http://127.0.0.1:9/h' }, { allowInsecureTargets: true });

    expect(local.url).toBe('http://127.0.0.1:9/h');
  });

  it('refuses an unknown organization', async () => {
    await expect(addWebhookEndpoint(uuidv7(), { url: 'https://hooks.example.com/in' })).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });
});

describe('subscriptions', () => {
  it('lists the endpoints of a tenant that receive an event type, and nothing of another tenant', async () => {
    const texts = await addWebhookEndpoint(tenantId, {
      url: 'https://hooks.example.com/texts',
      events: ['sms.received'],
    });

    const forTexts = await endpointsSubscribedTo(tenantId, 'sms.received');
    const forVoicemail = await endpointsSubscribedTo(tenantId, 'voicemail.received');

    expect(forTexts.map((e) => e.id)).toContain(texts.id);
    expect(forVoicemail.map((e) => e.id)).not.toContain(texts.id);
    expect(await listWebhookEndpoints(otherTenantId)).toEqual([]);
  });

  it("subscribes an endpoint registered without a list to the contract's three events only; webhook update changes the list", async () => {
    // Prepare
    const endpoint = await addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/outcomes' });
    const before = await endpointsSubscribedTo(tenantId, 'message.delivered');

    // Act
    const { endpoint: updated } = await webhookUpdate(endpoint.id, { events: 'message.delivered, message.failed' });

    // Assess
    expect(before.map((e) => e.id)).not.toContain(endpoint.id);
    expect(updated.events).toEqual(['message.delivered', 'message.failed']);
    expect((await endpointsSubscribedTo(tenantId, 'message.failed')).map((e) => e.id)).toContain(endpoint.id);
    expect((await endpointsSubscribedTo(tenantId, 'call.completed')).map((e) => e.id)).not.toContain(endpoint.id);
    await expect(webhookUpdate(endpoint.id, { events: 'message.sent' })).rejects.toThrow(
      'events: unknown event "message.sent"',
    );
    await expect(webhookUpdate(endpoint.id, { events: '' })).rejects.toThrow('at least one');
  });
});

describe('CLI commands', () => {
  it('webhook add shows the secret once; webhook list never does', async () => {
    const added = await webhookAdd({
      tenant: tenantId,
      url: 'https://hooks.example.com/cli',
      events: 'call.completed, sms.received',
    });
    const listed = await webhookList({ tenant: tenantId });

    expect(added).toEqual({
      endpoint: {
        id: expect.any(String),
        url: 'https://hooks.example.com/cli',
        events: ['call.completed', 'sms.received'],
        createdAt: expect.any(String),
        state: 'enabled',
        enabled: true,
        disabledAt: null,
        disabledReason: null,
        failingSince: null,
        previousSecretExpiresAt: null,
      },
      secret: expect.stringMatching(/^whsec_/),
    });
    expect(listed.endpoints.find((e) => e.id === added.endpoint.id)).toEqual(added.endpoint);
    expect(JSON.stringify(listed)).not.toContain('whsec_');
  });
});

describe("an endpoint's health, written once whatever races", () => {
  it('keeps the first start of a failing streak when concurrent attempts each note one', async () => {
    // Prepare
    const endpoint = await addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/streak' });
    // Act
    await recordEndpointStreak(endpoint, true, new Date('2026-11-20T00:00:00.000Z'));
    await recordEndpointStreak(endpoint, true, new Date('2026-11-20T00:00:05.000Z'));
    // Assess
    expect((await findWebhookEndpoint(endpoint.id)).failingSince).toBe('2026-11-20T00:00:00.000Z');
  });

  it('disables and counts an endpoint once when two attempts reach the same verdict', async () => {
    // Prepare
    const endpoint = await addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/gone' });
    const counted = jest.spyOn(metrics, 'addMetric');
    // Act
    const first = await disableUnhealthyEndpoint(endpoint, 'gone', 'the endpoint answered 410 Gone', new Date());
    const second = await disableUnhealthyEndpoint(endpoint, 'gone', 'the endpoint answered 410 Gone', new Date());
    // Assess
    expect([first, second]).toEqual([true, false]);
    expect(counted.mock.calls.filter(([name]) => name === ENDPOINTS_DISABLED_METRIC)).toHaveLength(1);
    counted.mockRestore();
  });

  it('does not disable for a failing streak that a success ended after the verdict was reached', async () => {
    // Prepare: judged on a streak since day 0; a success cleared it meanwhile
    const endpoint = await addWebhookEndpoint(tenantId, { url: 'https://hooks.example.com/recovered' });
    await recordEndpointStreak(endpoint, true, new Date('2026-11-15T00:00:00.000Z'));
    const judged = await findWebhookEndpoint(endpoint.id);
    await recordEndpointStreak(endpoint, false, new Date('2026-11-20T00:00:00.000Z'));
    // Act
    const disabled = await disableUnhealthyEndpoint(
      judged,
      'failing',
      'every attempt has failed since 2026-11-15',
      new Date('2026-11-20T00:00:01.000Z'),
    );
    // Assess
    expect(disabled).toBe(false);
    expect((await findWebhookEndpoint(endpoint.id)).disabledAt).toBeNull();
  });
});
