import { ROUTES } from '../../lambdas/handlers/api/routes';
import { createOpenApiValidator, type OpenApiDocument } from '../openapi-validator';
import { must, mustBeError, mustBeStatus, type Reply } from './client';
import type { Check, Me } from './check';

/**
 * The checks of the document, authentication, GET /me, the calls and API Gateway's own answers.
 * The contacts and messages checks are in their own modules.
 */

/** Well formed (`cct_` and 43 base64url characters) and unknown. */
const UNKNOWN_KEY = `cct_${'A'.repeat(43)}`;
/** A UUIDv7 no row can have: its time is the epoch. */
const UNKNOWN_ID = '00000000-0000-7000-8000-000000000000';

/** The contract's 401: the Error shape and `WWW-Authenticate: Bearer`. */
function mustBeUnauthorized(where: string, reply: Reply): void {
  mustBeError(where, reply, 401);
  must(/^Bearer\b/.test(reply.headers.get('www-authenticate') ?? ''), `${where}: no WWW-Authenticate: Bearer header`);
}

export const openApiCheck: Check = {
  name: 'GET /openapi.json without a key',
  async run(ctx) {
    const reply = await ctx.client.request('GET', '/openapi.json', { key: null });
    mustBeStatus('GET /openapi.json', reply, 200);
    const document = reply.body as OpenApiDocument;
    must(
      /^3\.1\.\d+$/.test(String(document?.openapi)),
      `GET /openapi.json: not an OpenAPI 3.1 document (openapi ${document?.openapi})`,
    );
    const missing = ROUTES.filter((route) => !document.paths?.[route.path]?.[route.method.toLowerCase()]).map(
      (route) => `${route.method} ${route.path}`,
    );
    must(missing.length === 0, `GET /openapi.json: the document lacks ${missing.join(', ')}`);
    try {
      ctx.client.useValidator(createOpenApiValidator(document));
    } catch (err) {
      throw new Error(`GET /openapi.json: the document does not compile: ${(err as Error).message}`, { cause: err });
    }
    return `OpenAPI ${document.openapi}, ${ROUTES.length} operations; every later answer is validated against it`;
  },
};

export const missingKeyCheck: Check = {
  name: '401 without a key',
  async run(ctx) {
    const reply = await ctx.client.request('GET', '/me', { key: null });
    mustBeUnauthorized('GET /me without a key', reply);
    return `401 ${reply.body.code}, WWW-Authenticate: ${reply.headers.get('www-authenticate')}`;
  },
};

export const unknownKeyCheck: Check = {
  name: '401 for an unknown key',
  async run(ctx) {
    const reply = await ctx.client.request('GET', '/me', { key: UNKNOWN_KEY });
    mustBeUnauthorized('GET /me with an unknown key', reply);
    return `401 ${reply.body.code}`;
  },
};

export const meCheck: Check = {
  name: 'GET /me',
  async run(ctx) {
    const reply = await ctx.client.request('GET', '/me');
    mustBeStatus('GET /me', reply, 200);
    const me = reply.body as Me;
    must(me.tenant !== null, 'GET /me: tenant is null for a valid key');
    const limit = Number(reply.headers.get('ratelimit-limit'));
    must(
      limit === me.rateLimit.requestsPerMinute,
      `GET /me: RateLimit-Limit ${limit} differs from rateLimit.requestsPerMinute ${me.rateLimit.requestsPerMinute}`,
    );
    ctx.me = me;
    return `organization ${me.tenant.id}, scopes ${me.permissions.join(', ') || '(none)'}, ${limit} requests per minute, ${reply.headers.get('ratelimit-remaining')} left`;
  },
};

export const listCallsCheck: Check = {
  name: 'GET /calls, two pages',
  scope: 'calls.view.team',
  probe: { method: 'GET', path: '/calls?limit=1' },
  async run(ctx) {
    const first = await ctx.client.request('GET', '/calls?limit=2');
    mustBeStatus('GET /calls', first, 200);
    const ids = (first.body.calls as { id: string }[]).map((call) => call.id);
    ctx.callId = ids[0];
    if (first.body.nextCursor === null) return `${ids.length} call(s), one page`;
    const second = await ctx.client.request('GET', `/calls?limit=2&cursor=${first.body.nextCursor}`);
    mustBeStatus('GET /calls, second page', second, 200);
    const again = (second.body.calls as { id: string }[]).filter((call) => ids.includes(call.id));
    must(again.length === 0, `GET /calls: the second page repeats ${again.map((c) => c.id).join(', ')}`);
    return `2 calls, then ${second.body.calls.length} more on the next page`;
  },
};

export const getCallCheck: Check = {
  name: 'GET /calls/{id}',
  scope: 'calls.view.team',
  probe: { method: 'GET', path: `/calls/${UNKNOWN_ID}` },
  async run(ctx) {
    const unknown = await ctx.client.request('GET', `/calls/${UNKNOWN_ID}`);
    mustBeError('GET /calls/{unknown id}', unknown, 404, { code: 'not_found' });
    if (ctx.callId === undefined) return 'an unknown id is 404 not_found (the organization has no call to read)';
    const reply = await ctx.client.request('GET', `/calls/${ctx.callId}`);
    mustBeStatus('GET /calls/{id}', reply, 200);
    must(reply.body.call.id === ctx.callId, `GET /calls/${ctx.callId}: answered call ${reply.body.call.id}`);
    return 'the newest call by its id; an unknown id is 404 not_found';
  },
};

export const callsValidationCheck: Check = {
  name: 'GET /calls refuses bad parameters',
  scope: 'calls.view.team',
  probe: { method: 'GET', path: '/calls?limit=1' },
  async run(ctx) {
    mustBeError('GET /calls?limit=0', await ctx.client.request('GET', '/calls?limit=0'), 400, { names: 'limit' });
    mustBeError('GET /calls?direction=sideways', await ctx.client.request('GET', '/calls?direction=sideways'), 400, {
      names: 'direction',
    });
    return '400 naming limit, then direction';
  },
};

export const unknownPathCheck: Check = {
  name: 'unknown path and method',
  async run(ctx) {
    const path = `/${ctx.runId}`;
    // API Gateway answers these itself (no handler, so no rate-limit headers).
    mustBeError(`GET ${path}`, await ctx.client.request('GET', path, { rateLimitHeaders: false }), 404, {
      code: 'not_found',
    });
    const wrongMethod = await ctx.client.request('DELETE', '/me', { rateLimitHeaders: false });
    mustBeError('DELETE /me', wrongMethod, 405);
    must(wrongMethod.headers.get('allow') !== null, 'DELETE /me: 405 without an Allow header');
    return `404 not_found for an unknown path; 405 (Allow: ${wrongMethod.headers.get('allow')}) for DELETE /me`;
  },
};
