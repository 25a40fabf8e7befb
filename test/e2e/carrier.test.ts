import { carrierRoutes } from '../../lambdas/handlers/carrier/routes';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import {
  inboundCallSequence,
  newSid,
  outboundCallSequence,
  type CallSequence,
} from '../../local/admin/carrier-sequences';
import { useLocalRuntime } from './support/e2e';
import { pollUntil } from './support/poll';
import { startReceiver, type Receiver } from './support/receiver';
import { postCallback, twilioSignature } from './support/twilio';

/**
 * The carrier's callbacks into the local runtime over real HTTP, signed as Twilio signs them
 * (computed here, not by the service's code). The runtime checks them with its own token and a
 * public URL that differs from its address, as behind a tunnel: what the provider signs is the
 * URL it was configured with.
 */
const TOKEN = 'e2e-carrier-auth-token';
const PUBLIC_URL = 'https://carrier-e2e.example.test';
const e2e = useLocalRuntime({
  args: ['--allow-http-webhooks', '--twilio-auth-token', TOKEN, '--public-url', PUBLIC_URL],
});

const DEMO_NUMBER = '+15005550006';
const AGENT = '0199a000-0000-7000-8000-0000000000a1';
const { twilioSmsInbound: smsInbound, twilioVoiceStatus: voiceStatus } = carrierRoutes;

let receiver: Receiver;
let secret: string;
let carrier: { runtimeRoot: string; signedRoot: string; authToken: string };

beforeAll(async () => {
  receiver = await startReceiver();
  carrier = { runtimeRoot: e2e.runtime.baseUrl.replace(/\/api\/v1$/, ''), signedRoot: PUBLIC_URL, authToken: TOKEN };
  await e2e.runtime.admin('tenant', 'update', e2e.demoTenantId, '--approve-host', '127.0.0.1');
  ({ secret } = await e2e.runtime.admin(
    'webhook',
    'add',
    '--tenant',
    e2e.demoTenantId,
    '--url',
    receiver.url('/hooks'),
    '--events',
    'sms.received',
  ));
}, 60_000);

afterAll(() => receiver?.close());

/** A text as Twilio's messaging webhook posts it. */
const inboundText = (from: string, body: string, messageSid = newSid('SM')) => ({
  MessageSid: messageSid,
  SmsMessageSid: messageSid,
  AccountSid: 'AC00000000000000000000000000000000',
  From: from,
  To: DEMO_NUMBER,
  Body: body,
  NumMedia: '0',
  NumSegments: '1',
});

const messagesWith = async (counterpart: string) => {
  const response = await e2e.api.get(`/messages/${counterpart}`, e2e.runtime.demoKey);
  expect(response.status).toBe(200);
  return response.body.messages as Record<string, unknown>[];
};

const callsFrom = async (number: string) => {
  const response = await e2e.api.get('/calls?limit=100', e2e.runtime.demoKey);
  expect(response.status).toBe(200);
  return (response.body.calls as Record<string, unknown>[]).filter(
    (call) => call.fromNumber === number || call.toNumber === number,
  );
};

async function play(sequence: CallSequence): Promise<void> {
  for (const { route, params, query } of sequence.posts) {
    const search = new URLSearchParams(query ?? {}).toString();
    const answer = await postCallback(carrier, `${route.path}${search ? `?${search}` : ''}`, params);
    expect(answer.status).toBe(200);
  }
}

describe('inbound texts', () => {
  it('stores a signed inbound text: it is in GET /messages/{counterpart}, with + and %2B, and reaches the receiver as sms.received', async () => {
    const params = inboundText('+14155550401', 'Hello from the carrier');

    const answer = await postCallback(carrier, smsInbound.path, params);
    const plain = await messagesWith('+14155550401');
    const encoded = await messagesWith('%2B14155550401');
    const request = await pollUntil(
      'sms.received at the receiver',
      () => receiver.received().find((r) => JSON.parse(r.body).data.message.messageSid === params.MessageSid),
      (found) => found !== undefined,
    );

    expect(answer).toEqual({
      status: 200,
      contentType: 'text/xml',
      body: '<?xml version="1.0" encoding="UTF-8"?><Response/>',
    });
    expect(plain).toEqual([
      expect.objectContaining({
        direction: 'inbound',
        fromNumber: '+14155550401',
        toNumber: DEMO_NUMBER,
        body: 'Hello from the carrier',
        messageSid: params.MessageSid,
      }),
    ]);
    expect(encoded).toEqual(plain);
    expect(request!.headers['x-service-event']).toBe('sms.received');
    expect(verifyDelivery(request!.headers, request!.body, secret)).toEqual({ ok: true });
    expect(JSON.parse(request!.body).data.message).toEqual(plain[0]);
  });

  it('stores a text the provider sends twice only once', async () => {
    const params = inboundText('+14155550402', 'Sent twice');

    const first = await postCallback(carrier, smsInbound.path, params);
    const retry = await postCallback(carrier, smsInbound.path, params);

    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(await messagesWith('+14155550402')).toHaveLength(1);
  });

  it("stores a text signed over its URL with the connection overrides' fragment, the other form Twilio may sign", async () => {
    const params = inboundText('+14155550404', 'Signed with the fragment');
    const overSignedFragment = twilioSignature(
      `${PUBLIC_URL}${smsInbound.path}#ct=2000&rt=5000&tt=15000&rc=5&rp=all`,
      params,
      TOKEN,
    );

    const answer = await postCallback(carrier, smsInbound.path, params, overSignedFragment);

    expect(answer.status).toBe(200);
    expect(await messagesWith('+14155550404')).toEqual([expect.objectContaining({ body: 'Signed with the fragment' })]);
  });

  it('refuses 413 a body far larger than any callback, and stores nothing', async () => {
    const answer = await postCallback(carrier, smsInbound.path, inboundText('+14155550403', 'x'.repeat(70 * 1024)));

    expect(answer.status).toBe(413);
    expect(await messagesWith('+14155550403')).toEqual([]);
  });
});

describe('callbacks that are not signed by the provider', () => {
  const FROM = '+14155550409';
  const params = inboundText(FROM, 'Let me in');
  const signedWith = (changes: Partial<typeof carrier>) => ({ ...carrier, ...changes });

  it.each([
    ['without a signature', () => postCallback(carrier, smsInbound.path, params, null)],
    [
      'signed with another token',
      () => postCallback(signedWith({ authToken: 'not-the-token' }), smsInbound.path, params),
    ],
    [
      "signed over the runtime's own address instead of the public URL",
      () => postCallback(signedWith({ signedRoot: carrier.runtimeRoot }), smsInbound.path, params),
    ],
    [
      'with the signature of another body',
      () =>
        postCallback(
          carrier,
          smsInbound.path,
          params,
          twilioSignature(`${PUBLIC_URL}${smsInbound.path}`, { ...params, Body: 'Let me in!' }, TOKEN),
        ),
    ],
    [
      'with a signature for another path',
      () => postCallback(signedWith({ signedRoot: `${PUBLIC_URL}/x` }), smsInbound.path, params),
    ],
    [
      'signed over its URL with a fragment other than the service’s',
      () =>
        postCallback(
          carrier,
          smsInbound.path,
          params,
          twilioSignature(`${PUBLIC_URL}${smsInbound.path}#rc=1`, params, TOKEN),
        ),
    ],
  ])('answers 403 to a text %s', async (_name, post) => {
    const answer = await post();

    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toEqual({ error: expect.any(String), code: 'invalid_signature' });
  });

  it('has written nothing for them', async () => {
    expect(await messagesWith(FROM)).toEqual([]);
  });

  it('answers 403 to a call status signed with another token, and no call appears', async () => {
    const sequence = inboundCallSequence({
      tenantId: e2e.demoTenantId,
      from: '+14155550408',
      to: DEMO_NUMBER,
      startedAt: new Date(),
      durationSec: 5,
    });

    const answers = await Promise.all(
      sequence.posts.map(({ params: leg }) =>
        postCallback({ ...carrier, authToken: 'not-the-token' }, voiceStatus.path, leg),
      ),
    );

    expect(answers.map((a) => a.status)).toEqual(sequence.posts.map(() => 403));
    expect(await callsFrom('+14155550408')).toEqual([]);
  });
});

describe('voice status callbacks', () => {
  it('turns the legs of an answered inbound call into one inbound call with its agent and an auto-created contact', async () => {
    const caller = '+14155550411';
    await play(
      inboundCallSequence({
        tenantId: e2e.demoTenantId,
        from: caller,
        to: DEMO_NUMBER,
        startedAt: new Date('2026-11-20T10:00:00Z'),
        agentId: AGENT,
        durationSec: 30,
      }),
    );

    const calls = await callsFrom(caller);
    const contact = await e2e.api.get(`/contacts/${calls[0]?.contactId}`, e2e.runtime.demoKey);

    expect(calls).toEqual([
      expect.objectContaining({
        direction: 'inbound',
        fromNumber: caller,
        toNumber: DEMO_NUMBER,
        status: 'completed',
        agentId: AGENT,
        isInternal: false,
        answeredAt: '2026-11-20T10:00:05.000Z',
      }),
    ]);
    expect(contact.status).toBe(200);
    expect(contact.body.contact).toMatchObject({ phoneNumber: caller, isAutoCreated: true, source: 'auto_inbound' });
  });

  it('turns a call placed from the softphone into one outbound call from the organization number', async () => {
    const dialled = '+14155550412';
    await play(
      outboundCallSequence({
        tenantId: e2e.demoTenantId,
        agentId: AGENT,
        from: DEMO_NUMBER,
        to: dialled,
        startedAt: new Date('2026-11-20T11:00:00Z'),
        status: 'no-answer',
        durationSec: 15,
      }),
    );

    const calls = await callsFrom(dialled);
    const contact = await e2e.api.get(`/contacts/${calls[0]?.contactId}`, e2e.runtime.demoKey);

    expect(calls).toEqual([
      expect.objectContaining({
        direction: 'outbound',
        fromNumber: DEMO_NUMBER,
        toNumber: dialled,
        status: 'no-answer',
        answeredAt: null,
        agentId: AGENT,
      }),
    ]);
    expect(contact.body.contact).toMatchObject({ phoneNumber: dialled, isAutoCreated: true, source: 'auto_outbound' });
  });
});

describe('the CLI against a runtime with its own token', () => {
  it('says how to pass the token rather than posting callbacks the runtime would refuse', async () => {
    const result = await e2e.runtime.adminResult(
      'simulate',
      'sms',
      '--tenant',
      e2e.demoTenantId,
      '--from',
      '+14155550421',
      '--body',
      'Hi',
    );

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('--twilio-auth-token');
    expect(result.stderr).not.toContain(TOKEN);
  });

  it('simulates with the token given, signing over the recorded public URL', async () => {
    const { message } = await e2e.runtime.admin(
      'simulate',
      'sms',
      '--tenant',
      e2e.demoTenantId,
      '--from',
      '+14155550422',
      '--body',
      'Hi',
      '--twilio-auth-token',
      TOKEN,
    );

    expect(message).toMatchObject({
      direction: 'inbound',
      fromNumber: '+14155550422',
      toNumber: DEMO_NUMBER,
      body: 'Hi',
    });
  });
});

describe('the callback routes', () => {
  // Shaped like a signature, so the edge rule lets it through to the route (it verifies nothing).
  const signatureShaped = {
    'X-Twilio-Signature': twilioSignature(`${PUBLIC_URL}${smsInbound.path}`, {}, 'another-token'),
  };

  it('answer 405 to another method and 404 to an unknown path under the prefix, once past the edge', async () => {
    const get = await fetch(`${carrier.runtimeRoot}${smsInbound.path}`, { headers: signatureShaped });
    const unknown = await fetch(`${carrier.runtimeRoot}/carrier/twilio/fax/inbound`, {
      method: 'POST',
      headers: signatureShaped,
    });

    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(unknown.status).toBe(404);
  });

  it('refuse anything under the prefix without a signature at the edge, whatever the method or path', async () => {
    const get = await fetch(`${carrier.runtimeRoot}${smsInbound.path}`);
    const unknown = await fetch(`${carrier.runtimeRoot}/carrier/twilio/fax/inbound`, { method: 'POST' });

    expect([get.status, unknown.status]).toEqual([403, 403]);
    expect(await unknown.json()).toEqual({
      error: 'X-Twilio-Signature is missing or is not a signature',
      code: 'invalid_signature',
    });
  });
});
