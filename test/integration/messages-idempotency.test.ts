import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { moneyLedgerOf, unsettledMessageIds } from '../support/ledger';
import { createTestTable } from '../support/table';
import { retryWhileBusy } from '../support/busy-retry';
import { expectTransactionsMet, markRaceMeters } from '../support/engine-meters';
import { aPrincipal, apiEvent, bodyOf, jsonHeaders, lambdaContext } from '../support/api-event';
import { handler as createContactHandler } from '../../lambdas/handlers/api/create-contact';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { stopLoopbackCarriers } from '../../lambdas/contexts/carrier/loopback';
import { listContacts } from '../../lambdas/contexts/contacts/contacts';
import { IdempotencyConflictError, IdempotencyMismatchError } from '../../lambdas/shared/errors';
import { withIdempotency } from '../../lambdas/handlers/http/idempotency';
import { consentOf } from '../../lambdas/contexts/consent/ledger';
import {
  CarrierError,
  type Carrier,
  type CarrierErrorDetails,
  type OutboundText,
} from '../../lambdas/contexts/texting/carrier-port';
import {
  CarrierRejectedError,
  CarrierUnavailableError,
  RecipientOptedOutError,
} from '../../lambdas/contexts/texting/errors';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { listMessages } from '../../lambdas/contexts/texting/messages';
import { spendOf } from '../../lambdas/contexts/texting/spend';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';

type Handler = (event: ReturnType<typeof apiEvent>, context: Context) => Promise<APIGatewayProxyResult>;

const FAILING_NUMBER = '+14155550999';
let sendMessageHandler: Handler;
let tenantId: string;
let otherTenantId: string;

beforeAll(async () => {
  await createTestTable();
  // The handler builds its carrier when it loads: configure it first, then load it.
  process.env.CARRIER = 'loopback';
  process.env.LOOPBACK_STATUS_DELAY_MS = '0';
  process.env.LOOPBACK_FAIL_TO = FAILING_NUMBER;
  ({ handler: sendMessageHandler } = await import('../../lambdas/handlers/api/send-message'));
  tenantId = (await createTenant({ name: 'Idempotent Org', smsNumber: '+14155550000' })).id;
  otherTenantId = (await createTenant({ name: 'Other Org', smsNumber: '+14155550001' })).id;
});

afterAll(stopLoopbackCarriers);

const post = (handler: Handler, body: unknown, key?: string, tenant = tenantId) =>
  handler(
    apiEvent({
      method: 'POST',
      body: JSON.stringify(body),
      headers: { ...jsonHeaders, ...(key && { 'Idempotency-Key': key }) },
      principal: aPrincipal({ tenantId: tenant }),
    }),
    lambdaContext,
  );

describe('Idempotency-Key on POST /messages', () => {
  it('answers a retry with the same key and body with the same message, sending and billing once', async () => {
    // Prepare
    const request = { to: '+14155550601', body: 'Exactly once' };
    // Act
    const first = await post(sendMessageHandler, request, 'send-key-1');
    const retry = await post(sendMessageHandler, { body: 'Exactly once', to: '+14155550601' }, 'send-key-1');
    // Assess
    expect(first.statusCode).toBe(201);
    expect(retry.statusCode).toBe(201);
    // The same message, as it now stands: the loopback carrier may have moved it on meanwhile.
    expect(bodyOf(retry).message).toEqual({
      ...bodyOf(first).message,
      status: expect.stringMatching(/^(queued|sent|delivered)$/),
    });
    expect(retry.headers).toMatchObject({ 'Idempotent-Replayed': 'true' });
    expect(first.headers?.['Idempotent-Replayed']).toBeUndefined();
    expect((await listMessages(tenantId, '+14155550601', { limit: 10 })).items).toHaveLength(1);
    expect(await spendOf(tenantId)).toBe(1);
    const { Items: records = [] } = await dynamo.send(
      new QueryCommand({
        TableName: TABLE_NAME,
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :key)',
        ExpressionAttributeValues: { ':pk': `T#${tenantId}`, ':key': 'SENDKEY#' },
      }),
    );
    expect(records).toEqual([expect.objectContaining({ type: 'sendKey', messageId: bodyOf(first).message.id })]);
    expect(records[0].ttl).toBeGreaterThan(Date.now() / 1000 + 23 * 3600);
    expect(JSON.stringify(records[0])).not.toContain('send-key-1'); // only a hash of the key is stored
  });

  it('answers 422 idempotency_mismatch for the same key with another body, doing nothing', async () => {
    await post(sendMessageHandler, { to: '+14155550602', body: 'Original' }, 'send-key-2');

    const reused = await post(sendMessageHandler, { to: '+14155550602', body: 'Changed' }, 'send-key-2');

    expect(reused.statusCode).toBe(422);
    expect(bodyOf(reused).code).toBe('idempotency_mismatch');
    expect((await listMessages(tenantId, '+14155550602', { limit: 10 })).items.map((m) => m.body)).toEqual([
      'Original',
    ]);
  });

  it('keeps keys per organization: the same key in another organization is a new request', async () => {
    const mine = await post(sendMessageHandler, { to: '+14155550603', body: 'Shared key' }, 'send-key-3');

    const theirs = await post(
      sendMessageHandler,
      { to: '+14155550603', body: 'Shared key' },
      'send-key-3',
      otherTenantId,
    );

    expect([mine.statusCode, theirs.statusCode]).toEqual([201, 201]);
    expect(bodyOf(theirs).message.id).not.toBe(bodyOf(mine).message.id);
    expect(bodyOf(theirs).message.tenantId).toBe(otherTenantId);
  });

  it('keeps a refused send: a retry replays the refusal and never reaches the carrier again', async () => {
    const first = await post(sendMessageHandler, { to: FAILING_NUMBER, body: 'Will fail' }, 'send-key-4');
    const retry = await post(sendMessageHandler, { to: FAILING_NUMBER, body: 'Will fail' }, 'send-key-4');

    expect([first.statusCode, retry.statusCode]).toEqual([422, 422]);
    expect(bodyOf(retry)).toMatchObject({ code: 'carrier_rejected', messageId: bodyOf(first).messageId });
    expect(retry.headers?.['Idempotent-Replayed']).toBe('true');
    expect((await listMessages(tenantId, FAILING_NUMBER, { limit: 10 })).items.map((m) => m.status)).toEqual([
      'failed',
    ]);
  });
});

describe('Idempotency-Key on POST /contacts', () => {
  it('replays a created contact instead of answering 409 for the retry', async () => {
    const request = { displayName: 'Retry Ray', phoneNumber: '+14155550611' };

    const first = await post(createContactHandler, request, 'contact-key-1');
    const retry = await post(createContactHandler, request, 'contact-key-1');
    const withoutKey = await post(createContactHandler, request);

    expect(first.statusCode).toBe(201);
    expect([retry.statusCode, bodyOf(retry)]).toEqual([201, bodyOf(first)]);
    expect(withoutKey.statusCode).toBe(409);
    const named = await listContacts(tenantId, { limit: 100, includeAutoCreated: true, search: 'Retry Ray' });
    expect(named.items).toHaveLength(1);
  });
});

/** A carrier that holds each send until released, counting the requests it got. */
function heldCarrier(): Carrier & { sent: OutboundText[]; release: () => void } {
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const sent: OutboundText[] = [];
  return {
    name: 'twilio',
    sent,
    release: () => release(),
    send: async (text) => {
      sent.push(text);
      await held;
      return { messageSid: `SM${text.messageId.replace(/-/g, '')}` };
    },
  };
}

/** A carrier that answers each send with the next of `outcomes` (a sid, or a failure), counting the requests. */
function scriptedCarrier(...outcomes: ('accept' | CarrierErrorDetails)[]): Carrier & { sent: OutboundText[] } {
  const sent: OutboundText[] = [];
  return {
    name: 'twilio',
    sent,
    send: async (text) => {
      const outcome = outcomes[sent.length] ?? 'accept';
      sent.push(text);
      if (outcome !== 'accept') throw new CarrierError(`Twilio failed the send (${outcome.kind})`, outcome);
      return { messageSid: `SM${text.messageId.replace(/-/g, '')}` };
    },
  };
}

/** Each test its own organization, so its money and messages are its own. */
let orgs = 0;
const newOrg = async () =>
  (await createTenant({ name: 'Keyed Org', smsNumber: `+1628555${String((orgs += 1)).padStart(4, '0')}` })).id;
const statusesOf = async (tenant: string, to: string) =>
  (await listMessages(tenant, to, { limit: 10 })).items.map((m) => m.status).sort();

// The sends below run at the real time, as the handler's do: a key's 24 hours are counted from it.
describe('the Idempotency-Key of a send: one key, one text, one carrier request', () => {
  it('answers a sequential retry with the same message, replayed, without charging or reaching the carrier again', async () => {
    // Prepare
    const org = await newOrg();
    const carrier = scriptedCarrier('accept');
    const request = { to: '+14155550701', body: 'Once, please' };
    // Act
    const first = await sendMessage(org, request, carrier, { idempotencyKey: 'seq-key' });
    const retry = await sendMessage(org, request, carrier, { idempotencyKey: 'seq-key' });
    // Assess
    expect([first.replayed, retry.replayed]).toEqual([false, true]);
    expect(retry.message).toEqual(first.message);
    expect(carrier.sent).toHaveLength(1);
    expect(await statusesOf(org, request.to)).toEqual(['queued']);
    expect(await moneyLedgerOf(org)).toEqual({ spendCents: 1, owedCents: 1 });
  });

  it("counts a key's 24 hours from the send's own clock: a retry at the same time replays, a retry after them sends anew", async () => {
    // Prepare: a send whose clock is two days behind the machine's
    const org = await newOrg();
    const carrier = scriptedCarrier('accept', 'accept');
    const request = { to: '+14155550709', body: 'Clocked' };
    const then = new Date(Date.now() - 2 * 24 * 3600 * 1000);
    // Act
    const first = await sendMessage(org, request, carrier, { idempotencyKey: 'clock-key', now: then });
    const retry = await sendMessage(org, request, carrier, { idempotencyKey: 'clock-key', now: then });
    const dayLater = await sendMessage(org, request, carrier, {
      idempotencyKey: 'clock-key',
      now: new Date(then.getTime() + 25 * 3600 * 1000),
    });
    // Assess
    expect([first.replayed, retry.replayed, dayLater.replayed]).toEqual([false, true, false]);
    expect(retry.message.id).toBe(first.message.id);
    expect(dayLater.message.id).not.toBe(first.message.id);
    expect(carrier.sent).toHaveLength(2);
    expect(await moneyLedgerOf(org)).toEqual({ spendCents: 2, owedCents: 2 });
  });

  it('lets exactly one of five concurrent identical sends reach the carrier and be charged; the others replay it', async () => {
    // Prepare
    const org = await newOrg();
    const carrier = scriptedCarrier();
    const request = { to: '+14155550702', body: 'Raced' };
    const meters = await markRaceMeters();
    // Act: a send whose transaction kept colliding past its retries is answered busy (503, nothing
    // written), and its client sends it again with the same key, as the 503 says
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        retryWhileBusy(() => sendMessage(org, request, carrier, { idempotencyKey: 'raced-key' })),
      ),
    );
    // Assess
    expect(carrier.sent).toHaveLength(1);
    expect(new Set(results.map((r) => r.message.id))).toEqual(new Set([carrier.sent[0].messageId]));
    expect(results.map((r) => r.replayed).sort()).toEqual([false, true, true, true, true]);
    expect(await statusesOf(org, request.to)).toEqual(['queued']);
    expect(await moneyLedgerOf(org)).toEqual({ spendCents: 1, owedCents: 1 });
    await expectTransactionsMet(meters);
  });

  it('answers a retry after an unknown outcome with the queued message, still charged, and never asks the carrier again', async () => {
    // Prepare
    const org = await newOrg();
    const carrier = scriptedCarrier({ kind: 'unknown', httpStatus: 503 });
    const request = { to: '+14155550703', body: 'Did it go?' };
    const first = await sendMessage(org, request, carrier, { idempotencyKey: 'unknown-key' });
    // Act
    const retry = await sendMessage(org, request, carrier, { idempotencyKey: 'unknown-key' });
    // Assess
    expect(first).toMatchObject({ replayed: false, message: { status: 'queued', messageSid: '' } });
    expect(retry).toEqual({ replayed: true, message: first.message });
    expect(carrier.sent).toHaveLength(1); // a second request could send the text twice
    expect(await unsettledMessageIds(org)).toEqual([first.message.id]); // the sweep or a callback settles it
    expect(await moneyLedgerOf(org)).toEqual({ spendCents: 1, owedCents: 1 });
  });

  it.each([
    [
      'refused (422)',
      { kind: 'refused', httpStatus: 400, providerCode: 21211 } as const,
      CarrierRejectedError,
      'unknown',
    ],
    [
      'refused as opted out (409)',
      { kind: 'refused', httpStatus: 400, providerCode: 21610, recipientOptedOut: true } as const,
      RecipientOptedOutError,
      'opted_out',
    ],
  ])(
    'answers a retry of a send the carrier %s with the same refusal, never asking the carrier again',
    async (_, refusal, Refusal, consent) => {
      // Prepare
      const org = await newOrg();
      const carrier = scriptedCarrier(refusal);
      const request = { to: '+14155550704', body: 'No thanks' };
      const first = await sendMessage(org, request, carrier, { idempotencyKey: 'refused-key' }).catch(
        (err: unknown) => err,
      );
      // Act
      const retry = await sendMessage(org, request, carrier, { idempotencyKey: 'refused-key' }).catch(
        (err: unknown) => err,
      );
      // Assess
      expect(first).toBeInstanceOf(Refusal);
      expect(retry).toBeInstanceOf(Refusal);
      expect(retry).toMatchObject({
        details: (first as CarrierRejectedError).details,
        headers: { 'Idempotent-Replayed': 'true' },
      });
      expect(carrier.sent).toHaveLength(1);
      expect(await statusesOf(org, request.to)).toEqual(['failed']);
      expect(await moneyLedgerOf(org)).toEqual({ spendCents: 0, owedCents: 0 });
      expect((await consentOf(org, request.to)).status).toBe(consent);
    },
  );

  it('keeps a 502 with its key (send again with a new key, as the 502 says): one text failed and refunded, one sent, one charge', async () => {
    // Prepare
    const org = await newOrg();
    const carrier = scriptedCarrier({ kind: 'not_sent', httpStatus: 429 }, 'accept');
    const request = { to: '+14155550705', body: 'Second time lucky' };
    const first = await sendMessage(org, request, carrier, { idempotencyKey: 'unavailable-key' }).catch(
      (err: unknown) => err,
    );
    // Act
    const sameKey = await sendMessage(org, request, carrier, { idempotencyKey: 'unavailable-key' }).catch(
      (err: unknown) => err,
    );
    const newKey = await sendMessage(org, request, carrier, { idempotencyKey: 'unavailable-key-2' });
    // Assess
    expect(first).toBeInstanceOf(CarrierUnavailableError);
    expect(sameKey).toBeInstanceOf(CarrierUnavailableError);
    expect(sameKey).toMatchObject({ headers: { 'Idempotent-Replayed': 'true' } });
    expect(newKey).toMatchObject({ replayed: false, message: { status: 'queued' } });
    expect(carrier.sent).toHaveLength(2);
    expect(await statusesOf(org, request.to)).toEqual(['failed', 'queued']);
    expect(await moneyLedgerOf(org)).toEqual({ spendCents: 1, owedCents: 1 });
  });

  it('refuses the same key with another body or recipient (IdempotencyMismatchError), sending and charging nothing more', async () => {
    // Prepare
    const org = await newOrg();
    const carrier = scriptedCarrier();
    await sendMessage(org, { to: '+14155550706', body: 'Original' }, carrier, { idempotencyKey: 'mismatch-key' });
    // Act
    const otherBody = sendMessage(org, { to: '+14155550706', body: 'Changed' }, carrier, {
      idempotencyKey: 'mismatch-key',
    });
    const otherRecipient = sendMessage(org, { to: '+14155550707', body: 'Original' }, carrier, {
      idempotencyKey: 'mismatch-key',
    });
    // Assess
    await expect(otherBody).rejects.toBeInstanceOf(IdempotencyMismatchError);
    await expect(otherRecipient).rejects.toBeInstanceOf(IdempotencyMismatchError);
    expect(carrier.sent).toHaveLength(1);
    expect((await listMessages(org, '+14155550706', { limit: 10 })).items.map((m) => m.body)).toEqual(['Original']);
    expect(await listMessages(org, '+14155550707', { limit: 10 })).toEqual({ items: [], nextCursor: null });
    expect(await moneyLedgerOf(org)).toEqual({ spendCents: 1, owedCents: 1 });
  });
});

describe('a retry of a send while the first still runs', () => {
  it('answers with the in-flight message as it stands and never reaches the carrier; five at once send one text', async () => {
    // Prepare
    const org = await newOrg();
    const carrier = heldCarrier();
    const request = { to: '+14155550631', body: 'Held' };
    const first = sendMessage(org, request, carrier, { idempotencyKey: 'held-key' });
    while (carrier.sent.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // Act
    const retries = await Promise.all(
      Array.from({ length: 5 }, () => sendMessage(org, request, carrier, { idempotencyKey: 'held-key' })),
    );
    carrier.release();
    const done = await first;
    // Assess
    expect(carrier.sent).toHaveLength(1);
    expect(retries.map((r) => [r.replayed, r.message.id, r.message.status])).toEqual(
      Array(5).fill([true, done.message.id, 'queued']),
    );
    expect(done.replayed).toBe(false);
    expect((await listMessages(org, request.to, { limit: 10 })).items).toHaveLength(1);
    expect(await moneyLedgerOf(org)).toEqual({ spendCents: 1, owedCents: 1 });
  });
});

describe('a retry of POST /contacts while the first request still runs', () => {
  it('is refused with 409 idempotency_conflict, and the key is replayable once the first finishes', async () => {
    let release!: () => void;
    const running = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const hasStarted = new Promise<void>((resolve) => (started = resolve));
    const scope = {
      tenantId,
      operation: 'createContact',
      headers: { 'idempotency-key': 'slow-key' },
      request: { displayName: 'Slow', phoneNumber: '+14155550621' },
    };
    const first = withIdempotency(scope, async () => {
      started();
      await running;
      return { statusCode: 201, body: { done: true } };
    });
    await hasStarted;

    const concurrent = withIdempotency(scope, async () => ({ statusCode: 201, body: { done: 'twice' } }));

    await expect(concurrent).rejects.toBeInstanceOf(IdempotencyConflictError);
    release();
    await expect(first).resolves.toEqual({ statusCode: 201, body: { done: true } });
    await expect(
      withIdempotency(scope, async () => ({ statusCode: 201, body: { done: 'again' } })),
    ).resolves.toMatchObject({
      statusCode: 201,
      body: { done: true },
    });
  });
});
