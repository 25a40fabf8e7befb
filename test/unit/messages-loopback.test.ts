import { CarrierError } from '../../lambdas/contexts/texting/carrier-port';
import { LoopbackCarrier, stopLoopbackCarriers } from '../../lambdas/contexts/carrier/loopback';
import type { updateMessageStatus } from '../../lambdas/contexts/texting/delivery-status';

const text = { tenantId: 't1', messageId: 'm1', from: '+14155550000', to: '+14155550100', body: 'Hi' };

/** Records the status steps instead of writing them. */
function recorder() {
  const steps: [string, unknown, string][] = [];
  const advance = (async (tenantId, ref, status) => {
    steps.push([tenantId, ref, status]);
    return { message: {} as never, changed: true };
  }) as typeof updateMessageStatus;
  return { steps, advance };
}

describe('the loopback carrier', () => {
  it('answers with a provider-style sid and then moves the message, named by its id and sid as Twilio names it, to sent, then delivered', async () => {
    // Prepare
    const { steps, advance } = recorder();
    const carrier = new LoopbackCarrier({ statusDelayMs: 0, advance });
    // Act
    const receipt = await carrier.send(text);
    await carrier.idle();
    // Assess
    expect(receipt.messageSid).toMatch(/^SM[0-9a-f]{32}$/);
    expect(steps).toEqual([
      ['t1', { messageId: 'm1', messageSid: receipt.messageSid }, 'sent'],
      ['t1', { messageId: 'm1', messageSid: receipt.messageSid }, 'delivered'],
    ]);
    await carrier.stop();
  });

  it('gives each message its own sid', async () => {
    // Prepare
    const carrier = new LoopbackCarrier({ statusDelayMs: 0, advance: recorder().advance });
    // Act
    const sids = new Set(
      await Promise.all(Array.from({ length: 20 }, () => carrier.send(text).then((r) => r.messageSid))),
    );
    // Assess
    expect(sids.size).toBe(20);
    await carrier.stop();
  });

  it('stops: pending status steps are cancelled and later sends refused as not sent (a safe retry)', async () => {
    // Prepare
    const { steps, advance } = recorder();
    const carrier = new LoopbackCarrier({ statusDelayMs: 60_000, advance });
    await carrier.send(text);
    // Act
    await carrier.stop();
    // Assess
    expect(steps).toEqual([]);
    await expect(carrier.send(text)).rejects.toMatchObject({ name: 'CarrierError', details: { kind: 'not_sent' } });
  });

  it('stops every live loopback carrier at once (runtime shutdown)', async () => {
    // Prepare
    const { steps, advance } = recorder();
    const one = new LoopbackCarrier({ statusDelayMs: 60_000, advance });
    const two = new LoopbackCarrier({ statusDelayMs: 60_000, advance });
    await one.send(text);
    await two.send(text);
    // Act
    await stopLoopbackCarriers();
    // Assess
    expect(steps).toEqual([]);
    await expect(two.send(text)).rejects.toBeInstanceOf(CarrierError);
  });

  it('refuses numbers it is configured to fail (an invalid number), to exercise the 422 path locally', async () => {
    // Prepare
    const { steps, advance } = recorder();
    const carrier = new LoopbackCarrier({ statusDelayMs: 0, advance, failTo: ['+14155550100'] });
    // Act
    const sent = carrier.send(text);
    // Assess
    await expect(sent).rejects.toMatchObject({
      name: 'CarrierError',
      details: { kind: 'refused', httpStatus: 400, providerCode: 21211 },
    });
    await carrier.idle();
    expect(steps).toEqual([]);
    await carrier.stop();
  });

  it('tries a failed status step again, like Twilio a callback answered 5xx, and goes on once it lands', async () => {
    // Prepare
    const advance = jest
      .fn()
      .mockRejectedValueOnce(new Error('throttled'))
      .mockResolvedValue({ message: {}, changed: true });
    const carrier = new LoopbackCarrier({ statusDelayMs: 0, advance });
    // Act
    await carrier.send(text);
    await carrier.idle();
    // Assess
    expect(advance.mock.calls.map(([, , status]) => status)).toEqual(['sent', 'sent', 'delivered']);
    await carrier.stop();
  });

  it('gives up on a message after a few failed tries of one step (the row may be gone)', async () => {
    // Prepare
    const advance = jest.fn().mockRejectedValue(new Error('Message not found'));
    const carrier = new LoopbackCarrier({ statusDelayMs: 0, advance });
    // Act
    await carrier.send(text);
    await carrier.idle();
    // Assess
    expect(advance).toHaveBeenCalledTimes(4);
    expect(advance.mock.calls.every(([, , status]) => status === 'sent')).toBe(true);
    await carrier.stop();
  });
});
