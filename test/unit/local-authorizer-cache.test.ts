import type { AuthDecision, Principal } from '../../lambdas/contexts/tenants/auth';
import { createAuthorizerCache } from '../../local/authorizer-cache';

const principal = { tenant: { id: 't1' } } as Principal;
const ALLOW: AuthDecision = { effect: 'allow', principal };
const DENY: AuthDecision = { effect: 'deny', reason: 'unauthorized' };

function setup(ttlSeconds: number, decisions: AuthDecision[] = [ALLOW], maxEntries?: number) {
  let now = 1_000_000;
  let asked = 0;
  const authorize = jest.fn(
    async (_header: string): Promise<AuthDecision> => decisions[Math.min(asked++, decisions.length - 1)],
  );
  const cache = createAuthorizerCache({ ttlSeconds, authorize, now: () => now, maxEntries });
  return { cache, authorize, advance: (ms: number) => (now += ms) };
}

describe('the local authorizer cache', () => {
  it('reuses a decision until the TTL has passed, then asks again', async () => {
    const { cache, authorize, advance } = setup(300, [ALLOW, DENY]);

    const first = await cache.decide('Bearer a');
    advance(299_999);
    const withinTtl = await cache.decide('Bearer a');
    advance(1);
    const afterTtl = await cache.decide('Bearer a');

    expect([first, withinTtl, afterTtl]).toEqual([ALLOW, ALLOW, DENY]);
    expect(authorize).toHaveBeenCalledTimes(2);
  });

  it('caches a deny like an allow', async () => {
    const { cache, authorize } = setup(300, [DENY, ALLOW]);

    await cache.decide('Bearer bad');
    const again = await cache.decide('Bearer bad');

    expect(again).toEqual(DENY);
    expect(authorize).toHaveBeenCalledTimes(1);
  });

  it('keeps one decision per Authorization header', async () => {
    const { cache, authorize } = setup(300, [ALLOW, DENY]);

    const a = await cache.decide('Bearer a');
    const b = await cache.decide('Bearer b');

    expect([a, b]).toEqual([ALLOW, DENY]);
    expect(authorize).toHaveBeenCalledTimes(2);
  });

  it('drops every decision when flushed, as FlushStageAuthorizersCache does: the next request of each key asks again', async () => {
    const { cache, authorize } = setup(300, [ALLOW, ALLOW, DENY, DENY]);
    await cache.decide('Bearer a');
    await cache.decide('Bearer b');

    const dropped = cache.flush();
    const a = await cache.decide('Bearer a');
    const b = await cache.decide('Bearer b');

    expect(dropped).toBe(2);
    expect([a, b]).toEqual([DENY, DENY]);
    expect(authorize).toHaveBeenCalledTimes(4);
  });

  it('caches a decision answered after a flush, as API Gateway does: a flush alone leaves a decision in flight behind', async () => {
    const { cache, authorize } = setup(300, [DENY]);
    let answer!: (decision: AuthDecision) => void;
    authorize.mockImplementationOnce(() => new Promise((resolve) => (answer = resolve)));

    const inFlight = cache.decide('Bearer a');
    cache.flush();
    answer(ALLOW);
    await inFlight;
    const next = await cache.decide('Bearer a');

    expect(next).toEqual(ALLOW);
    expect(authorize).toHaveBeenCalledTimes(1);
  });

  it('settles once the decisions asked for before it are answered and cached, so a flush then leaves none of them', async () => {
    // Prepare: two decisions in flight, one that fails
    const { cache, authorize } = setup(300, [DENY]);
    const answers: ((decision: AuthDecision) => void)[] = [];
    let fail!: (err: Error) => void;
    authorize.mockImplementationOnce(() => new Promise((resolve) => answers.push(resolve)));
    authorize.mockImplementationOnce(() => new Promise((_, reject) => (fail = reject)));
    const inFlight = [cache.decide('Bearer a'), cache.decide('Bearer b').catch((err: Error) => err.message)];
    // Act: settle while they are in flight; a decision asked for afterwards is not waited for
    let settled: number | undefined;
    const settling = cache.settle().then((n) => (settled = n));
    void cache.decide('Bearer later');
    const inFlightBefore = cache.inFlight();
    answers[0](ALLOW);
    await inFlight[0];
    await Promise.resolve();
    const settledAfterOne = settled;
    fail(new Error('table unreachable'));
    await settling;
    cache.flush();
    const next = await cache.decide('Bearer a');
    // Assess
    expect(inFlightBefore).toBe(3);
    expect(settledAfterOne).toBeUndefined();
    expect(settled).toBe(2);
    expect(await inFlight[1]).toBe('table unreachable');
    expect(next).toEqual(DENY);
  });

  it('asks every time with a TTL of 0', async () => {
    const { cache, authorize } = setup(0);

    await cache.decide('Bearer a');
    await cache.decide('Bearer a');

    expect(authorize).toHaveBeenCalledTimes(2);
    expect(cache.size()).toBe(0);
  });

  it('does not cache a failure of the authorizer', async () => {
    const { cache, authorize } = setup(300);
    authorize.mockRejectedValueOnce(new Error('table unreachable'));

    await expect(cache.decide('Bearer a')).rejects.toThrow('table unreachable');
    const retried = await cache.decide('Bearer a');

    expect(retried).toEqual(ALLOW);
    expect(authorize).toHaveBeenCalledTimes(2);
  });

  it('stays within maxEntries, dropping expired entries first and then the oldest', async () => {
    const { cache, authorize, advance } = setup(300, [ALLOW], 2);
    await cache.decide('Bearer old');
    advance(300_000);
    await cache.decide('Bearer b');
    await cache.decide('Bearer c');
    await cache.decide('Bearer d');

    await cache.decide('Bearer c');
    await cache.decide('Bearer d');
    const callsWhileCached = authorize.mock.calls.length;
    await cache.decide('Bearer b');

    expect(cache.size()).toBe(2);
    expect(callsWhileCached).toBe(4);
    expect(authorize).toHaveBeenCalledTimes(5);
  });
});
