import { flushAuthorizerCache } from '../../local/admin/authorizer-cache';
import { requestAuthorizerCacheFlush, startRuntimeControl, type RuntimeControl } from '../../local/runtime-control';
import type { RuntimeInfo } from '../../local/runtime-file';

/** The local runtime's control listener, and the operator CLI's use of it (the FlushStageAuthorizersCache of the laptop). */
let control: RuntimeControl;
let flushes = 0;
beforeAll(async () => {
  control = await startRuntimeControl({ flushAuthorizerCache: () => (flushes += 1) && 7 });
});
afterAll(() => control.stop());
beforeEach(() => {
  flushes = 0;
});

describe('the local runtime control listener', () => {
  it('flushes the authorizer cache for a caller holding the token of runtime.json, and says how many decisions went', async () => {
    const dropped = await requestAuthorizerCacheFlush(control);

    expect(dropped).toBe(7);
    expect(flushes).toBe(1);
    expect(control.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('refuses a caller without the token, and answers 404 to anything but the flush', async () => {
    const wrongToken = await requestAuthorizerCacheFlush({ url: control.url, token: 'guessed' }).catch((err: Error) => err.message);
    const other = await fetch(`${control.url}/anything`, { method: 'POST', headers: { Authorization: `Bearer ${control.token}` } });

    expect(wrongToken).toMatch(/refused to flush its authorizer cache: 401/);
    expect(other.status).toBe(404);
    expect(flushes).toBe(0);
  });
});

describe('the CLI on the local runtime', () => {
  const runtime = (withControl: boolean) => ({ apiBaseUrl: 'http://127.0.0.1:3000/api/v1', ...(withControl && { control: { url: control.url, token: control.token } }) }) as RuntimeInfo;

  it('flushes the running runtime’s cache after a change that takes access away', async () => {
    const outcome = await flushAuthorizerCache({ runtime: runtime(true) });

    expect(outcome).toEqual({ flushed: true, where: 'the local runtime at http://127.0.0.1:3000/api/v1' });
    expect(flushes).toBe(1);
  });

  it('says so when the runtime predates its control listener', async () => {
    const outcome = await flushAuthorizerCache({ runtime: runtime(false) });

    expect(outcome).toEqual({ flushed: false, reason: expect.stringContaining('restart it') });
    expect(flushes).toBe(0);
  });
});
