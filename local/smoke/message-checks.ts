import { must, mustBeError, mustBeStatus, type Reply } from './client';
import { needs, type Check } from './check';

/**
 * Texts, read-only: the threads, one conversation asked for with its number percent-encoded and
 * literal (API Gateway hands handlers the encoded form: both must give the same answer), and
 * POST /messages only with a body that fails validation, so no text is ever sent or billed.
 */

const PROBE_READ = { method: 'GET', path: '/messages' };

export const listThreadsCheck: Check = {
  name: 'GET /messages',
  scope: 'sms.view',
  probe: PROBE_READ,
  async run(ctx) {
    const reply = await ctx.client.request('GET', '/messages');
    mustBeStatus('GET /messages', reply, 200);
    const threads = reply.body.threads as { counterpartNumber: string }[];
    ctx.counterpart = threads[0]?.counterpartNumber ?? ctx.markedNumber;
    return `${threads.length} thread(s)`;
  },
};

const messageIds = (reply: Reply) => (reply.body.messages as { id: string }[]).map((message) => message.id);

export const encodedCounterpartCheck: Check = {
  name: 'GET /messages/{counterpart}, %2B-encoded and literal +',
  scope: 'sms.view',
  probe: PROBE_READ,
  async run(ctx) {
    const counterpart = needs(ctx.counterpart, 'a number from GET /messages');
    const encodedPath = `/messages/${encodeURIComponent(counterpart)}?limit=5`;
    const literalPath = `/messages/${counterpart}?limit=5`;
    const encoded = await ctx.client.request('GET', encodedPath);
    mustBeStatus(`GET ${encodedPath} (what HTTP clients and generated SDKs send)`, encoded, 200);
    const literal = await ctx.client.request('GET', literalPath);
    mustBeStatus(`GET ${literalPath}`, literal, 200);
    const [a, b] = [messageIds(encoded), messageIds(literal)];
    must(
      JSON.stringify(a) === JSON.stringify(b),
      `GET ${encodedPath} and ${literalPath} differ: ${a.length} vs ${b.length} message(s)`,
    );
    return `the same ${a.length} message(s) for ${encodedPath.split('?')[0]} and ${literalPath.split('?')[0]}`;
  },
};

/** GET /messages/{counterpart} with a path that names no E.164 number: a clear 400, never a 404 or 5xx. */
function counterpartRefusal(name: string, counterpart: string): Check {
  return {
    name,
    scope: 'sms.view',
    probe: PROBE_READ,
    async run(ctx) {
      mustBeError(`GET /messages/${counterpart}`, await ctx.client.request('GET', `/messages/${counterpart}`), 400, {
        names: 'counterpart',
      });
      return '400 naming counterpart';
    },
  };
}

export const counterpartValidationCheck = counterpartRefusal(
  'GET /messages/{counterpart} refuses a bad number',
  '12345',
);
// "%2" followed by a non-hex digit cannot be decoded.
export const malformedEscapeCheck = counterpartRefusal(
  'GET /messages/{counterpart} refuses a malformed escape',
  '%2G14155550100',
);

export const sendValidationCheck: Check = {
  name: 'POST /messages refuses a bad body (nothing sent)',
  scope: 'sms.send',
  probe: { method: 'POST', path: '/messages' },
  async run(ctx) {
    const reply = await ctx.client.request('POST', '/messages', {
      json: { to: '12', body: `Smoke ${ctx.runId}: never sent` },
    });
    mustBeError('POST /messages to "12"', reply, 400, { names: 'body.to' });
    return '400 naming body.to';
  },
};
