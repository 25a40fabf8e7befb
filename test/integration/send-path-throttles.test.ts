import { randomBytes } from 'node:crypto';
import { createTestTable } from '../support/table';
import { moneyLedgerOf, unsettledMessageIds } from '../support/ledger';
import { throttleWrites } from '../support/write-throttles';
import { dynamo } from '../../lambdas/shared/aws';
import { isContention } from '../../lambdas/shared/table/contention';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import type { Carrier } from '../../lambdas/contexts/texting/carrier-port';
import { updateMessageStatus } from '../../lambdas/contexts/texting/delivery-status';
import { getMessage, listMessages } from '../../lambdas/contexts/texting/messages';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { settleUnknownOutcomes } from '../../lambdas/contexts/texting/settlement';
import { settleSpend } from '../../lambdas/contexts/texting/spend';

/**
 * A throttle anywhere in a text's path loses nothing. The path's writes, in order: 0 the send
 * transaction (consent check, charge, message, thread, key), 1 the sid's lookup row and 2 the sid
 * on the message (the carrier's answer), 3 the `sent` callback, 4 the `delivered` callback. Each is throttled in turn,
 * first for a few attempts (the
 * client's own retries absorb it: nobody notices), then for good (what a partition over its
 * budget for longer than a request does):
 *   0: the send answers contention (the API's 503) having stored, charged and sent nothing; the
 *      same request again with its Idempotency-Key sends the text once.
 *   1, 2: the send still answers 201 with the sid (the carrier has the text; failing would invite
 *      a second send); the sid reaches the row with the carrier's first callback, which names both,
 *      and the sweep, an hour later, leaves the delivered text alone.
 *   3, 4: the callback answers contention (Twilio retries a 5xx); its retry lands.
 * Every run ends with one delivered text, charged once, off the unsettled worklist.
 */
jest.setTimeout(60_000);
beforeAll(createTestTable);

const throttles = throttleWrites(dynamo);
afterAll(() => throttles.remove());

let orgNumbers = 0;
async function organization(): Promise<string> {
  const tenant = await createTenant({
    name: 'Throttled',
    smsNumber: `+1415556${String((orgNumbers += 1)).padStart(4, '0')}`,
    spendingLimitCents: 100,
  });
  await settleSpend(tenant.id); // as `tenant create` does, so write 0 is the send's own transaction
  return tenant.id;
}

/** A carrier that takes every text, as Twilio's 201, counting them. */
function countingCarrier(): Carrier & { sids: string[] } {
  const sids: string[] = [];
  return {
    name: 'twilio',
    sids,
    send: async () => ({ messageSid: sids[sids.push(`SM${randomBytes(16).toString('hex')}`) - 1] }),
  };
}

/**
 * Twilio's status callback: names our message (its URL) and the sid; retried while it fails, as Twilio retries a 5xx.
 */
async function callback(
  tenantId: string,
  messageId: string,
  messageSid: string,
  status: 'sent' | 'delivered',
  whileFailing: () => void,
): Promise<number> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await updateMessageStatus(tenantId, { messageId, messageSid }, status);
      return attempt;
    } catch (err) {
      if (!isContention(err)) throw err;
      whileFailing();
    }
  }
}

const WRITES = [
  'the send transaction',
  "the sid's lookup row",
  'the sid on the message',
  'the sent callback',
  'the delivered callback',
];

describe.each([
  ['for a few attempts (absorbed by the client)', 3],
  ['for good (until the caller comes back)', Infinity],
])('a text whose path is throttled %s', (_how, attempts) => {
  it.each(WRITES.map((name, write) => [name, write] as const))(
    'at %s loses nothing and is sent once',
    async (_name, write) => {
      // Prepare
      const tenantId = await organization();
      const carrier = countingCarrier();
      const request = { to: '+14155550190', body: `Throttled at ${write}` };
      const stopThrottling = () => throttles.disarm();
      throttles.arm({ writes: [write], attempts });

      // Act: the send (again, with its key, when it answered contention), then the carrier's two callbacks
      let answer = await sendMessage(tenantId, request, carrier, { idempotencyKey: `key-${write}` }).catch(
        (err: unknown) => err,
      );
      const firstAnswerWasContention = isContention(answer);
      if (firstAnswerWasContention) {
        stopThrottling();
        answer = await sendMessage(tenantId, request, carrier, { idempotencyKey: `key-${write}` });
      }
      const { message } = answer as Awaited<ReturnType<typeof sendMessage>>;
      const sid = carrier.sids[0];
      const sentTries = await callback(tenantId, message.id, sid, 'sent', stopThrottling);
      const deliveredTries = await callback(tenantId, message.id, sid, 'delivered', stopThrottling);
      const sweep = await settleUnknownOutcomes({ now: new Date(Date.now() + 2 * 3_600_000) });

      // Assess
      expect(firstAnswerWasContention).toBe(write === 0 && attempts === Infinity);
      expect(carrier.sids).toHaveLength(1);
      expect(message.messageSid).toBe(sid);
      expect(await getMessage(tenantId, message.id)).toMatchObject({ status: 'delivered', messageSid: sid });
      expect((await listMessages(tenantId, request.to, { limit: 10 })).items).toHaveLength(1);
      expect(await moneyLedgerOf(tenantId)).toEqual({ spendCents: 1, owedCents: 1 });
      expect(await unsettledMessageIds(tenantId)).toEqual([]);
      expect(sweep.failed).toBe(0);
      const retriedCallbacks = (write === 3 ? sentTries : 1) + (write === 4 ? deliveredTries : 1) - 2;
      expect(retriedCallbacks).toBe(attempts === Infinity && write >= 3 ? 1 : 0);
      expect(throttles.throttledAttempts().get(write)).toBeGreaterThanOrEqual(Math.min(attempts, 3));
    },
  );
});
