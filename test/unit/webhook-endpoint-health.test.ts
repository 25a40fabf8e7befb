import { ENDPOINT_FAILING_LIMIT_MS, judgeAttempt } from '../../lambdas/contexts/webhooks/endpoint-health';

const now = Date.parse('2026-11-26T12:00:00.000Z');
const DAY = 24 * 3600 * 1000;
const failed = (status?: number) => ({ ok: false as const, status, error: status ? `HTTP ${status}` : 'timeout' });

describe('endpoint health after an attempt', () => {
  it('disables at once an endpoint that answers 410 Gone, even one that never failed before', () => {
    expect(judgeAttempt({ failingSince: null }, failed(410), now)).toEqual({
      disabled: true,
      reason: 'gone',
      detail: 'the endpoint answered 410 Gone',
    });
  });

  it('disables an endpoint at a failure once every attempt has failed for 5 days, not before', () => {
    const fiveDaysAgo = new Date(now - ENDPOINT_FAILING_LIMIT_MS).toISOString();
    const almost = new Date(now - ENDPOINT_FAILING_LIMIT_MS + 1).toISOString();

    expect(ENDPOINT_FAILING_LIMIT_MS).toBe(5 * DAY);
    expect(judgeAttempt({ failingSince: fiveDaysAgo }, failed(500), now)).toMatchObject({
      disabled: true,
      reason: 'failing',
    });
    expect(judgeAttempt({ failingSince: fiveDaysAgo }, failed(), now)).toMatchObject({
      disabled: true,
      reason: 'failing',
    });
    expect(judgeAttempt({ failingSince: almost }, failed(500), now)).toEqual({ disabled: false });
    expect(judgeAttempt({ failingSince: null }, failed(500), now)).toEqual({ disabled: false });
  });

  it('never disables on a success, however long the endpoint failed before', () => {
    expect(
      judgeAttempt({ failingSince: new Date(now - 30 * DAY).toISOString() }, { ok: true, status: 204 }, now),
    ).toEqual({ disabled: false });
  });
});
