import { flushAuthorizerCache } from '../../local/admin/authorizer-cache';
import {
  authorizerCacheActions,
  requestAuthorizerCacheFlush,
  requestAuthorizerDecisionsSettled,
  startRuntimeControl,
  type RuntimeControl,
} from '../../local/runtime-control';
import type { RuntimeInfo } from '../../local/runtime-file';

/**
 * The local runtime's control listener, and the operator CLI's use of it (the FlushStageAuthorizersCache of the
 * laptop).
 */
let control: RuntimeControl;
/** What the listener was asked, in order. */
let asked: string[] = [];
/** Settles the decisions under way, once the test lets it. */
let endDecisionsInFlight: () => void = () => {};
beforeAll(async () => {
  control = await startRuntimeControl({
    flushAuthorizerCache: () => asked.push('flush') && 7,
    settleAuthorizerDecisions: () => {
      asked.push('settle');
      return new Promise((settled) => (endDecisionsInFlight = () => settled(2)));
    },
  });
});
afterAll(() => control.stop());
beforeEach(() => {
  asked = [];
});

describe('the local runtime control listener', () => {
  it('flushes the authorizer cache for a caller holding the token of runtime.json, and says how many decisions went', async () => {
    const dropped = await requestAuthorizerCacheFlush(control);

    expect(dropped).toBe(7);
    expect(asked).toEqual(['flush']);
    expect(control.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers a wait for the decisions under way once they have ended, with how many there were', async () => {
    let answered = false;
    const settling = requestAuthorizerDecisionsSettled(control).then((n) => ((answered = true), n));
    while (asked.length === 0) await new Promise((wake) => setTimeout(wake, 5));
    const answeredBeforeTheyEnded = answered;

    endDecisionsInFlight();

    expect(await settling).toBe(2);
    expect(answeredBeforeTheyEnded).toBe(false);
    expect(asked).toEqual(['settle']);
  });

  it('refuses a caller without the token, and answers 404 to anything but its two operations', async () => {
    const wrongToken = await requestAuthorizerCacheFlush({ url: control.url, token: 'guessed' }).catch(
      (err: Error) => err.message,
    );
    const wrongTokenWait = await requestAuthorizerDecisionsSettled({ url: control.url, token: 'guessed' }).catch(
      (err: Error) => err.message,
    );
    const other = await fetch(`${control.url}/anything`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${control.token}` },
    });

    expect(wrongToken).toMatch(/refused to flush its authorizer cache: 401/);
    expect(wrongTokenWait).toMatch(/refused to wait for its authorizer decisions under way: 401/);
    expect(other.status).toBe(404);
    expect(asked).toEqual([]);
  });

  it('announces each operation on the runtime console', async () => {
    const lines: string[] = [];
    const actions = authorizerCacheActions({ flush: () => 3, inFlight: () => 1, settle: async () => 1 }, (line) =>
      lines.push(line),
    );

    actions.flushAuthorizerCache();
    await actions.settleAuthorizerDecisions();

    expect(lines).toEqual([
      'Authorizer cache flushed by the operator CLI: 3 decisions dropped',
      'Authorizer cache: waiting for 1 decision under way to end',
    ]);
  });
});

describe('the CLI on the local runtime', () => {
  const runtime = (withControl: boolean) =>
    ({
      apiBaseUrl: 'http://127.0.0.1:3000/api/v1',
      ...(withControl && { control: { url: control.url, token: control.token } }),
    }) as RuntimeInfo;

  it('flushes the running runtime’s cache after a change that takes access away, waits for the decisions under way, and flushes again', async () => {
    const flushing = flushAuthorizerCache({ runtime: runtime(true) });
    while (asked.length < 2) await new Promise((wake) => setTimeout(wake, 5));
    endDecisionsInFlight();

    const outcome = await flushing;

    expect(outcome).toEqual({ flushed: true, where: 'the local runtime at http://127.0.0.1:3000/api/v1' });
    expect(asked).toEqual(['flush', 'settle', 'flush']);
  });

  it('says so when the runtime predates its control listener', async () => {
    const outcome = await flushAuthorizerCache({ runtime: runtime(false) });

    expect(outcome).toEqual({ flushed: false, reason: expect.stringContaining('restart it') });
    expect(asked).toEqual([]);
  });
});
