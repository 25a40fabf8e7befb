import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  BatchGetCommand,
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { metrics } from '../../lambdas/shared/aws';
import { CarrierError, type Carrier } from '../../lambdas/contexts/texting/carrier-port';
import { scheduledToPut } from '../../lambdas/contexts/texting/due-list';
import { CarrierRejectedError, CarrierTimeShortError, QuietHoursError } from '../../lambdas/contexts/texting/errors';
import type { SendMessageInput } from '../../lambdas/contexts/texting/schemas';
import { requestHashOf } from '../../lambdas/contexts/texting/send-keys';
import { SEND_TIME_NEEDED_MS, sendMessage } from '../../lambdas/contexts/texting/sending';

/**
 * When POST /messages sends a text (texting/sending.ts) against aws-sdk-client-mock: a `sendAt` and the
 * organization's quiet hours make it `scheduled` (charged now, listed under its number, no carrier), quiet hours
 * under `refuse` answer 422 before anything is charged, a category decides whether a `marketing`-only policy holds
 * it, and a send keeps the time the carrier needs. The same on the engine: integration/quiet-hours-sends.test.ts
 * and integration/scheduled-texts.test.ts.
 */ import { batchGetAnswer } from '../support/batch-get-answer';

const ddb = mockClient(DynamoDBDocumentClient);
const TENANT = '0199a000-0000-7000-8000-000000000001';
const pk = `T#${TENANT}`;
const SID = 'SM0123456789abcdef0123456789abcdef';
/** 04:00 in San Francisco (UTC-8 in November), where +1415 numbers are: before the 08:00 window opens. */
const NIGHT = new Date('2026-11-25T12:00:00.000Z');
const OPENING = '2026-11-25T16:00:00.000Z';
const TO = '+14155550101';

const carrier = { name: 'loopback', send: jest.fn() } satisfies Carrier;
const quietHours = (mode: 'off' | 'refuse' | 'defer', appliesTo: 'all' | 'marketing' = 'all') => ({
  quietHours: { mode, appliesTo, window: { start: '08:00', end: '21:00' } },
});
/** The organization row, the send's own message row when it reads it back, and `keyRow` under any send key. */
function table(organization: Record<string, unknown> = {}, keyRow?: Record<string, unknown>) {
  const rowAt = (Key: { pk: string; sk: string }): Record<string, unknown> | undefined => {
    if (Key.sk === 'TENANT')
      return {
        ...Key,
        id: TENANT,
        smsNumber: '+14155550000',
        billingStatus: 'active',
        spendingLimitCents: null,
        smsRateCents: 2,
        limitVersion: 0,
        ...organization,
      };
    if (Key.sk.startsWith('SENDKEY#')) return keyRow && { ...Key, ...keyRow };
    return undefined;
  };
  ddb.on(GetCommand).callsFake(({ Key }: { Key: { pk: string; sk: string } }) => ({ Item: rowAt(Key) }));
  // A send reads its key, its organization and its thread in one batch.
  ddb.on(BatchGetCommand).callsFake(batchGetAnswer(rowAt));
  ddb.on(TransactWriteCommand).resolves({});
  ddb.on(PutCommand).resolves({});
  ddb.on(UpdateCommand).resolves({ Attributes: {} });
  return rowAt;
}
/** The organization's table (`table()`) with `key-1` naming a text of it the carrier later failed (undelivered). */
function aFailedTextUnderKey() {
  const messageId = '0199a000-0000-7000-8000-0000000000e1';
  const rowAt = table({}, { messageId, requestHash: requestHashOf({ to: TO, body: 'Hello' }), ttl: 2_000_000_000 });
  ddb.on(GetCommand, { Key: { pk: `${pk}#MSG#${messageId}`, sk: 'MESSAGE' } }).resolves({
    Item: {
      pk: `${pk}#MSG#${messageId}`,
      sk: 'MESSAGE',
      id: messageId,
      tenantId: TENANT,
      direction: 'outbound',
      fromNumber: '+14155550000',
      toNumber: TO,
      counterpartNumber: TO,
      body: 'Hello',
      status: 'failed',
      failureReason: 'carrier_failed',
      messageSid: SID,
      isRead: true,
      createdAt: '2026-11-25T11:00:00.000Z',
    },
  });
  return { messageId, rowAt };
}
const send = (input: SendMessageInput, options: Parameters<typeof sendMessage>[3] = {}) =>
  sendMessage(TENANT, input, carrier, { now: NIGHT, ...options });
const transactions = () => ddb.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems!);
const storedRowOf = (items: ReturnType<typeof transactions>[number]) =>
  items.find((item) => String(item.Put?.Item?.sk) === 'MESSAGE')!.Put!.Item!;

beforeEach(() => {
  ddb.reset();
  carrier.send.mockReset().mockResolvedValue({ messageSid: SID });
});
afterEach(() => jest.restoreAllMocks());

describe('a text asked for later', () => {
  it('is stored scheduled at its time, charged now, listed under its number, and not handed to the carrier', async () => {
    // Prepare
    table();
    const addMetric = jest.spyOn(metrics, 'addMetric');
    // Act
    const { message, replayed } = await send({ to: TO, body: 'Hello', sendAt: '2026-11-25T13:00:00Z' });
    // Assess
    expect([message.status, message.sendAt, replayed]).toEqual(['scheduled', '2026-11-25T13:00:00.000Z', false]);
    const [store] = transactions();
    expect(store).toContainEqual(scheduledToPut(message));
    expect(storedRowOf(store)).toMatchObject({ status: 'scheduled', costCents: 2, sendAt: '2026-11-25T13:00:00.000Z' });
    expect(carrier.send).not.toHaveBeenCalled();
    expect(addMetric.mock.calls).toEqual([['TextsScheduled', 'Count', 1]]);
  });

  it('is refused with 400 naming sendAt when it is less than a minute ahead, charging nothing', async () => {
    // Prepare
    table();
    // Act + Assess
    await expect(send({ to: TO, body: 'Hello', sendAt: '2026-11-25T12:00:30Z' })).rejects.toThrow('sendAt: ');
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('is moved to the window opening when its time falls in quiet hours under defer, and kept when it does not', async () => {
    // Prepare
    table(quietHours('defer'));
    // Act
    const quiet = await send({ to: TO, body: 'Hello', sendAt: '2026-11-25T13:00:00Z' });
    const open = await send({ to: TO, body: 'Hello', sendAt: '2026-11-25T17:00:00Z' });
    // Assess
    expect(quiet.message.sendAt).toBe(OPENING);
    expect(open.message.sendAt).toBe('2026-11-25T17:00:00.000Z');
  });
});

describe('an organization that is not there', () => {
  it('is answered 404 naming the organization, with nothing charged or sent', async () => {
    // Prepare: the batch finds no row at all (the organization was deleted after its key was cached)
    table();
    ddb.on(BatchGetCommand).resolves({ Responses: {} });
    // Act + Assess
    await expect(send({ to: TO, body: 'Hello' })).rejects.toMatchObject({ status: 404, message: 'Tenant not found' });
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(carrier.send).not.toHaveBeenCalled();
  });
});

describe('a text for now under quiet hours', () => {
  it('is scheduled for the opening of its recipient’s window under defer, not sent', async () => {
    // Prepare
    table(quietHours('defer'));
    // Act
    const { message } = await send({ to: TO, body: 'Hello' });
    // Assess
    expect([message.status, message.sendAt]).toEqual(['scheduled', OPENING]);
    expect(transactions()[0]).toContainEqual(scheduledToPut(message));
    expect(carrier.send).not.toHaveBeenCalled();
  });

  it('is refused with 422 naming the opening under refuse: nothing charged, stored or sent', async () => {
    // Prepare
    table(quietHours('refuse'));
    // Act
    const refusal = send({ to: TO, body: 'Hello' });
    // Assess
    await expect(refusal).rejects.toThrow(QuietHoursError);
    await expect(refusal).rejects.toMatchObject({ allowedAt: new Date(OPENING) });
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
    expect(carrier.send).not.toHaveBeenCalled();
  });

  it('is sent at once, without a sendAt or a row under its number, when the window is open', async () => {
    // Prepare
    table(quietHours('refuse'));
    // Act
    const { message } = await send({ to: TO, body: 'Hello' }, { now: new Date('2026-11-25T17:00:00Z') });
    // Assess
    expect(message.status).toBe('queued');
    expect(message).not.toHaveProperty('sendAt');
    expect(transactions()[0].some((item) => String(item.Put?.Item?.type) === 'scheduledTo')).toBe(false);
    expect(carrier.send).toHaveBeenCalledTimes(1);
  });

  it('is held under a marketing-only policy only when the request marks it marketing, and keeps its category', async () => {
    // Prepare
    table(quietHours('defer', 'marketing'));
    // Act
    const transactional = await send({ to: TO, body: 'Your code is 1234', category: 'transactional' });
    const unmarked = await send({ to: TO, body: 'Your code is 1234' });
    const marketing = await send({ to: TO, body: 'Sale today', category: 'marketing' });
    // Assess
    expect([transactional, unmarked, marketing].map((r) => [r.message.status, r.message.category])).toEqual([
      ['queued', 'transactional'],
      ['queued', undefined],
      ['scheduled', 'marketing'],
    ]);
    expect(unmarked.message).not.toHaveProperty('category');
    expect(transactions().map((store) => storedRowOf(store).category)).toEqual([
      'transactional',
      undefined,
      'marketing',
    ]);
  });
});

describe('the time a send keeps for the carrier', () => {
  it('answers 503 before any read when less is left than a send needs, and sends with exactly that much', async () => {
    // Prepare
    table();
    // Act + Assess
    await expect(send({ to: TO, body: 'Hello' }, { remainingMs: () => SEND_TIME_NEEDED_MS - 1 })).rejects.toThrow(
      CarrierTimeShortError,
    );
    expect(ddb.calls()).toHaveLength(0);
    await expect(send({ to: TO, body: 'Hello' }, { remainingMs: () => SEND_TIME_NEEDED_MS })).resolves.toMatchObject({
      replayed: false,
    });
  });
});

describe('a text the carrier refuses at once', () => {
  it('is failed in the name of the API request that sent it, which the message.failed event names', async () => {
    // Prepare: the stored row is read back when the refusal fails it
    table();
    ddb.on(GetCommand, { Key: { sk: 'MESSAGE' } }).callsFake(({ Key }: { Key: { pk: string } }) => ({
      Item: { ...storedRowOf(transactions()[0]), ...Key },
    }));
    carrier.send.mockRejectedValue(
      new CarrierError('Twilio refused the message: HTTP 400, error 21211', {
        kind: 'refused',
        httpStatus: 400,
        providerCode: 21211,
      }),
    );
    // Act
    const refusal = send({ to: TO, body: 'Hello' }, { request: { id: 'req-1', idempotencyKey: 'key-1' } });
    // Assess
    await expect(refusal).rejects.toThrow(CarrierRejectedError);
    const failing = transactions()[1][0].Update!;
    expect(failing.ExpressionAttributeValues).toMatchObject({
      ':set_status': 'failed',
      ':set_changeRequestId': 'req-1',
      ':set_changeIdempotencyKey': 'key-1',
    });
  });
});

describe('an Idempotency-Key whose row changed under the send', () => {
  const cancelled = (...reasons: { Code: string; Item?: Record<string, unknown> }[]) =>
    new TransactionCanceledException({
      message: 'Transaction cancelled',
      $metadata: {},
      CancellationReasons: reasons.map((r) => ({ Code: r.Code, ...(r.Item && { Item: marshall(r.Item) }) })),
    });

  it('sends again, in a new transaction, when the key it was refused on had expired: no one else holds it', async () => {
    // Prepare: the key's row (expired) refused the claim once
    table();
    const expired = { messageId: 'other', requestHash: 'h', ttl: Math.floor(NIGHT.getTime() / 1000) - 10 };
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(
        cancelled(
          { Code: 'None' },
          { Code: 'None' },
          { Code: 'ConditionalCheckFailed', Item: expired },
          { Code: 'None' },
          { Code: 'None' },
        ),
      )
      .resolves({});
    // Act
    const { message, replayed } = await send({ to: TO, body: 'Hello' }, { idempotencyKey: 'key-1' });
    // Assess
    expect([message.status, replayed]).toEqual(['queued', false]);
    expect(transactions()).toHaveLength(2);
    expect(carrier.send).toHaveBeenCalledTimes(1);
  });

  it('replays a text that failed for a reason a send does not answer with an error, as it stands', async () => {
    // Prepare: the key names a text the carrier later failed (undelivered)
    const { messageId } = aFailedTextUnderKey();
    // Act
    const { message, replayed } = await send({ to: TO, body: 'Hello' }, { idempotencyKey: 'key-1' });
    // Assess
    expect([message.id, message.status, replayed]).toEqual([messageId, 'failed', true]);
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  });

  it('finds each row of its batched read by its key, whatever order the batch answers in (BatchGetItem keeps none)', async () => {
    // Prepare: the key names a text the carrier later failed; the batch answers the thread first, the key last
    const { messageId, rowAt } = aFailedTextUnderKey();
    const answerRank = (row: Record<string, unknown>) =>
      String(row.sk) === 'TENANT' ? 1 : String(row.sk).startsWith('SENDKEY#') ? 2 : 0;
    ddb.on(BatchGetCommand).callsFake(
      batchGetAnswer(
        (key) => (key.sk === 'THREAD' ? { lastDirection: 'outbound' } : rowAt(key)),
        (a, b) => answerRank(a) - answerRank(b),
      ),
    );
    // Act
    const { message, replayed } = await send({ to: TO, body: 'Hello' }, { idempotencyKey: 'key-1' });
    // Assess
    expect([message.id, message.status, replayed]).toEqual([messageId, 'failed', true]);
    expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  });
});
