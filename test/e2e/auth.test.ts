import { createHash } from 'node:crypto';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import type { RouteSpec } from '../../lambdas/handlers/http/route-spec';
import { SCOPES } from '../../lambdas/contexts/tenants/scopes';
import { GATEWAY_RESPONSES } from '../../lambdas/handlers/http/gateway-responses';
import { unknownId, useLocalRuntime } from './support/e2e';
import { revokeInTableOnly } from './support/seed';
import { startDynamoDbHoldProxy, type DynamoDbHoldProxy } from '../support/dynamodb-hold-proxy';
import { runDynamoDbLocalEndpoint } from '../support/local-runtime';

/**
 * GET /openapi.json, GET /me, and the key checks every authenticated endpoint shares (spec section
 * 5). The authorizer cache keeps each key's decision for 300 s, API Gateway's default. The runtime
 * reaches DynamoDB Local through a proxy that can hold the answer of a read, to put an authorizer
 * decision in flight across an operator command.
 */
const AUTHORIZER_CACHE_TTL_SECONDS = 300;
let dynamodb: DynamoDbHoldProxy;
beforeAll(async () => {
  dynamodb = await startDynamoDbHoldProxy(runDynamoDbLocalEndpoint());
});
const e2e = useLocalRuntime(() => ({
  inMemory: false,
  args: ['--dynamodb-endpoint', dynamodb.url, '--authorizer-cache-ttl', String(AUTHORIZER_CACHE_TTL_SECONDS)],
}));
afterAll(() => dynamodb?.stop());

const authenticated = ROUTES.filter((route) => route.auth === 'apiKey');
const describeRoute = (route: RouteSpec) => `${route.method} ${route.path}`;
/** A concrete path for a route; path parameters get a well-formed id that names nothing. */
const pathOf = (route: RouteSpec) => route.path.replace(/\{[^}]+\}/g, unknownId());
const send = (route: RouteSpec, key?: string, headers?: Record<string, string>) =>
  e2e.api.request(route.method, pathOf(route), { key, headers, ...(route.body && { json: {} }) });

/** Keys (and an organization) made with the operator CLI, all at once. */
type IssuedKey = { key: string; apiKey: { id: string } };
const keys = {} as Record<
  | 'twoScopes'
  | 'expiring'
  | 'revoked'
  | 'expired'
  | 'contactsView'
  | 'starter'
  | 'busy'
  | 'quiet'
  | 'revokedLive'
  | 'revokedInTable'
  | 'downgraded'
  | 'revokedInFlight'
  | 'downgradedInFlight',
  IssuedKey
>;
let downgradedTenantId: string;
let downgradedInFlightTenantId: string;
beforeAll(async () => {
  const create = (...args: string[]) => e2e.runtime.admin('key', 'create', '--tenant', e2e.demoTenantId, ...args);
  const keyOfNewTenant = async (...args: string[]): Promise<IssuedKey & { tenantId: string }> => {
    const { tenant } = await e2e.runtime.admin('tenant', 'create', ...args);
    return { ...(await e2e.runtime.admin('key', 'create', '--tenant', tenant.id)), tenantId: tenant.id };
  };
  let downgraded: IssuedKey & { tenantId: string };
  let downgradedInFlight: IssuedKey & { tenantId: string };
  [
    keys.twoScopes,
    keys.expiring,
    keys.revoked,
    keys.expired,
    keys.contactsView,
    keys.busy,
    keys.quiet,
    keys.starter,
    keys.revokedLive,
    keys.revokedInTable,
    downgraded,
    keys.revokedInFlight,
    downgradedInFlight,
  ] = await Promise.all([
    create('--scopes', 'sms.view,contacts.view'),
    create('--expires-at', '2099-01-01T00:00:00+01:00'),
    create('--name', 'to revoke'),
    create('--expires-at', '2020-01-01T00:00:00Z'),
    create('--scopes', 'contacts.view'),
    create('--name', 'busy'),
    create('--name', 'quiet'),
    keyOfNewTenant('--name', 'Starter Org', '--plan', 'starter'),
    create('--name', 'revoked while in use'),
    create('--name', 'revoked in the table alone'),
    keyOfNewTenant('--name', 'Downgraded Org', '--plan', 'pro'),
    create('--name', 'revoked while its decision is in flight'),
    keyOfNewTenant('--name', 'Downgraded In Flight Org', '--plan', 'pro'),
  ]);
  keys.downgraded = downgraded;
  downgradedTenantId = downgraded.tenantId;
  keys.downgradedInFlight = downgradedInFlight;
  downgradedInFlightTenantId = downgradedInFlight.tenantId;
  // Revoked before its first use: no authorizer decision is cached for it.
  await e2e.runtime.admin('key', 'revoke', keys.revoked.apiKey.id);
});

describe('GET /openapi.json', () => {
  it('answers 200 without a key with an OpenAPI 3.1 document of every route', async () => {
    const response = await e2e.api.get('/openapi.json');

    expect(response.status).toBe(200);
    expect(response.body.openapi).toBe('3.1.0');
    for (const route of ROUTES) expect(response.body.paths[route.path]).toHaveProperty(route.method.toLowerCase());
  });

  it('names the URL it was reached on as its server', async () => {
    const response = await e2e.api.get('/openapi.json');

    expect(response.body.servers).toEqual([{ url: e2e.runtime.baseUrl }]);
  });
});

describe('GET /me', () => {
  it("answers the demo key's organization, identity, five scopes, rate limit and quiet-hours policy", async () => {
    const response = await e2e.api.get('/me', e2e.runtime.demoKey);

    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      tenant: { id: e2e.demoTenantId, name: 'Demo Organization', slug: 'demo-organization', plan: 'pro' },
      apiKey: {
        id: expect.any(String),
        name: 'Demo key',
        prefix: e2e.runtime.demoKey.slice(0, 12),
        expiresAt: null,
        createdAt: expect.any(String),
      },
      permissions: [...SCOPES],
      rateLimit: { requestsPerMinute: 120 },
      // v1's default: no text held or refused for the hour.
      quietHours: { mode: 'off', appliesTo: 'all', window: { start: '08:00', end: '21:00' } },
    });
    expect(response.headers.get('RateLimit-Limit')).toBe('120');
  });

  it('lists only the scopes a key holds, and needs none', async () => {
    const response = await e2e.api.get('/me', keys.twoScopes.key);

    expect(response.status).toBe(200);
    expect(response.body.permissions).toEqual(['contacts.view', 'sms.view']);
    expect(response.body.apiKey.id).toBe(keys.twoScopes.apiKey.id);
  });

  it('takes the Bearer scheme in any case, with any number of spaces (RFC 9110)', async () => {
    const responses = await Promise.all(
      [`bearer ${e2e.runtime.demoKey}`, `BEARER  ${e2e.runtime.demoKey}`].map((authorization) =>
        e2e.api.request('GET', '/me', { headers: { Authorization: authorization } }),
      ),
    );

    expect(responses.map((response) => response.status)).toEqual([200, 200]);
  });

  it('shows the expiry of a key that expires', async () => {
    const response = await e2e.api.get('/me', keys.expiring.key);

    expect(response.body.apiKey.expiresAt).toBe('2098-12-31T23:00:00.000Z');
  });
});

describe('401 on every authenticated endpoint', () => {
  const cases: [string, () => Record<string, string>][] = [
    ['no Authorization header', () => ({})],
    ['an unknown key', () => ({ Authorization: `Bearer cct_${'A'.repeat(43)}` })],
    ['a header that is not Bearer', () => ({ Authorization: `Basic ${Buffer.from('user:pass').toString('base64')}` })],
    // Refused by the gateway's validation expression, before the authorizer (as API Gateway's validationRegex does).
    ['a token not of the key format', () => ({ Authorization: `Bearer ${e2e.runtime.demoKey.slice(0, -1)}` })],
    ['a revoked key', () => ({ Authorization: `Bearer ${keys.revoked.key}` })],
    ['an expired key', () => ({ Authorization: `Bearer ${keys.expired.key}` })],
  ];

  it.each(cases)('refuses %s with 401 and WWW-Authenticate: Bearer everywhere', async (_name, headersOf) => {
    const responses = await Promise.all(authenticated.map((route) => send(route, undefined, headersOf())));

    for (const response of responses) {
      expect(response.status).toBe(401);
      expect(response.headers.get('WWW-Authenticate')).toBe('Bearer');
      expect(response.body).toEqual({
        ...GATEWAY_RESPONSES.unauthorized.body,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
    }
  });
});

describe('403', () => {
  it('refuses a key lacking the route scope, naming the scope, and lets the scope it holds through', async () => {
    const responses = await Promise.all(
      authenticated.map(async (route) => ({ route, response: await send(route, keys.contactsView.key) })),
    );

    const refused = responses.filter(({ response }) => response.status === 403);
    const needOtherScope = authenticated.filter((route) => route.scope !== null && route.scope !== 'contacts.view');
    expect(refused.map(({ route }) => describeRoute(route))).toEqual(needOtherScope.map(describeRoute));
    for (const { route, response } of refused) {
      expect(response.body.code).toBe('insufficient_scope');
      expect(response.body.error).toContain(route.scope);
    }
  });

  it('refuses every key of an organization whose plan has no API access, even GET /me', async () => {
    const responses = await Promise.all(authenticated.map((route) => send(route, keys.starter.key)));

    for (const response of responses) {
      expect(response.status).toBe(403);
      expect(response.body).toEqual({
        ...GATEWAY_RESPONSES.accessDenied.body,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
    }
  });
});

describe('429', () => {
  const BATCH = 20;

  it('refuses a key over 120 requests a minute with Retry-After, and not another key of the same organization', async () => {
    // Windows are whole minutes: a run that crosses into the next one needs up to twice the limit.
    let refused;
    for (let sent = 0; sent < 2 * 120 + BATCH && !refused; sent += BATCH) {
      const batch = await Promise.all(Array.from({ length: BATCH }, () => e2e.api.get('/me', keys.busy.key)));
      refused = batch.find((response) => response.status === 429);
    }
    const other = await e2e.api.get('/me', keys.quiet.key);

    expect(refused?.body.code).toBe('rate_limited');
    expect(Number(refused?.headers.get('Retry-After'))).toBeGreaterThan(0);
    expect(refused?.headers.get('RateLimit-Remaining')).toBe('0');
    expect(other.status).toBe(200);
  });
});

describe('requests API Gateway answers itself', () => {
  it('answers 404 for a path no route has, outside or inside /api/v1', async () => {
    const responses = await Promise.all(
      ['/nothing-here', '/contacts/x/y'].map((path) => e2e.api.get(path, e2e.runtime.demoKey)),
    );
    const outside = await fetch(e2e.runtime.baseUrl.replace('/api/v1', '/api/v2/me'));

    for (const response of responses) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({
        ...GATEWAY_RESPONSES.notFound.body,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
    }
    expect(outside.status).toBe(404);
    expect(await outside.json()).toEqual({
      ...GATEWAY_RESPONSES.notFound.body,
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });

  it('answers 405 for a method the path does not have', async () => {
    const response = await e2e.api.request('PUT', '/contacts', { key: e2e.runtime.demoKey, json: {} });

    expect(response.status).toBe(405);
    expect(response.body).toEqual({
      ...GATEWAY_RESPONSES.methodNotAllowed.body,
      requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
  });
});

describe('taking access away bites within 5 seconds, while decisions are cached for 300 s', () => {
  const WITHIN_MS = 5_000;

  /** Milliseconds from now until `key` is answered `status` on GET /me, polling; fails after 5 s. */
  async function msUntil(key: string, status: number): Promise<number> {
    const started = Date.now();
    for (;;) {
      const { status: answered } = await e2e.api.get('/me', key);
      const elapsed = Date.now() - started;
      if (answered === status) return elapsed;
      if (elapsed > WITHIN_MS) throw new Error(`still ${answered} after ${elapsed} ms`);
      await new Promise((wake) => setTimeout(wake, 100));
    }
  }

  it('refuses a key revoked with the CLI (401) and a key whose organization lost API access (403), though their allows were cached', async () => {
    // Prepare: each key's decision is in the cache; one more key is revoked in the table alone,
    // as nothing but the cache would notice: it is still admitted, so the cache is in force
    const inUse = await Promise.all(
      [keys.revokedLive, keys.downgraded, keys.revokedInTable].map(({ key }) => e2e.api.get('/me', key)),
    );
    await revokeInTableOnly(e2e.runtime.info, keys.revokedInTable.apiKey.id);
    const revokedButCached = await e2e.api.get('/me', keys.revokedInTable.key);
    // Act: the operator's commands, then the keys' next requests
    await Promise.all([
      e2e.runtime.admin('key', 'revoke', keys.revokedLive.apiKey.id),
      e2e.runtime.admin('tenant', 'update', downgradedTenantId, '--plan', 'starter'),
    ]);
    const [revokedMs, downgradedMs] = await Promise.all([
      msUntil(keys.revokedLive.key, 401),
      msUntil(keys.downgraded.key, 403),
    ]);
    // Assess
    expect(inUse.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(revokedButCached.status).toBe(200);
    expect(revokedMs).toBeLessThan(WITHIN_MS);
    expect(downgradedMs).toBeLessThan(WITHIN_MS);
    expect((await e2e.api.get('/me', keys.downgraded.key)).body).toMatchObject({ code: 'api_access_disabled' });
    // The flush dropped every cached decision, the one of the key revoked in the table too.
    expect((await e2e.api.get('/me', keys.revokedInTable.key)).status).toBe(401);
  });
});

describe('no window: a decision in flight while access is taken away is not what the next request gets', () => {
  /**
   * Resolves once the runtime's console shows `pattern` in what it printed after `from` characters (it announces the
   * CLI's calls).
   */
  async function printed(pattern: RegExp, from: number): Promise<void> {
    while (!pattern.test(e2e.runtime.stdout().slice(from))) await new Promise((wake) => setTimeout(wake, 10));
  }

  const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
  it.each([
    // The authorizer reads the key row, then the organization row: the read the change makes stale is held.
    [
      'key revoke',
      401,
      () => keys.revokedInFlight,
      () => `KEYHASH#${sha256(keys.revokedInFlight.key)}`,
      () => ['key', 'revoke', keys.revokedInFlight.apiKey.id],
    ],
    [
      'tenant update --plan starter',
      403,
      () => keys.downgradedInFlight,
      () => `T#${downgradedInFlightTenantId}`,
      () => ['tenant', 'update', downgradedInFlightTenantId, '--plan', 'starter'],
    ],
  ])(
    '%s: every request that starts after the command returns is refused (%i)',
    async (_command, refused, keyOf, heldRow, command) => {
      // Prepare: a first request of the key, whose authorizer has read the row before the change; its answer is held
      const held = dynamodb.holdNextGetItem(heldRow());
      const inFlight = e2e.api.get('/me', keyOf().key);
      await held.read;
      const printedBefore = e2e.runtime.stdout().length;
      // Act: the command; the held answer comes once the CLI has flushed the cache and waits for the decisions under
      // way
      const changed = e2e.runtime.admin(...command());
      await printed(/waiting for 1 decision under way/, printedBefore);
      held.release();
      await changed;
      const next = await e2e.api.get('/me', keyOf().key);
      // Assess: the decision in flight was the allow made before the change (so the race happened), and it is gone
      expect((await inFlight).status).toBe(200);
      expect(next.status).toBe(refused);
      expect(
        e2e.runtime
          .stdout()
          .slice(printedBefore)
          .match(/Authorizer cache flushed/g),
      ).toHaveLength(2);
    },
  );
});
