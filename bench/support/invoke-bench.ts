import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { APIGatewayProxyEvent } from 'aws-lambda';
import { ROUTES } from '../../lambdas/handlers/api/routes';
import { API_PREFIX, type RouteSpec } from '../../lambdas/handlers/http/route-spec';
import { authorizeAuthorizationHeader, principalToContext } from '../../lambdas/contexts/tenants/auth';
import { callKey } from '../../lambdas/contexts/calls/calls';
import { createContact } from '../../lambdas/contexts/contacts/contacts';
import { toProxyEvent } from '../../local/proxy-event';
import type { Fixture } from './api-bench';
import type { BuiltBundle } from './bundles';
import { inPool } from './load';
import { distribution, round, type Distribution } from './stats';
import { LOCAL_ENGINE_CREDENTIALS_ENV } from '../../lambdas/shared/config';
import { encodeRoutePermissions, ROUTE_SCOPES_ENV } from '../../lambdas/handlers/authorizer/policy';
import {
  DEFAULT_USAGE_PLAN_BUCKETS,
  usagePlanKeyPrefixOf,
  USAGE_PLAN_BUCKETS_ENV,
  USAGE_PLAN_KEY_PREFIX_ENV,
} from '../../lambdas/handlers/authorizer/usage-plan-keys';

/**
 * 5. The functions as deployed: each bundle (the same file as in section 1) in a fresh Node
 * process with the environment a function gets, pointed at DynamoDB Local, invoked one event at
 * a time like a Lambda execution environment. Gives the first (cold) invocation, the warm
 * invocations, the CPU each one costs and the memory the function holds afterwards: what the
 * Lambda memory size has to cover.
 */
export type InvokeResult = {
  name: string;
  invocations: number;
  failures: number;
  firstFailure?: string;
  initMs: number;
  firstInvokeMs: number;
  warmMs: Distribution;
  /** CPU (user + system, all threads) per warm invocation (the first one excluded). */
  cpuMsPerInvoke: number;
  rssMiB: number;
  peakRssMiB: number;
  heapUsedMiB: number;
};

const CHILD = `
import { readFileSync } from 'node:fs';
const [bundle, eventsFile] = process.argv.slice(1);
const events = JSON.parse(readFileSync(eventsFile, 'utf8'));
const t0 = performance.now();
const { handler } = await import(bundle);
const initMs = performance.now() - t0;
const context = (i) => ({ awsRequestId: 'bench-' + i, functionName: 'bench', functionVersion: '$LATEST', memoryLimitInMB: '256',
  invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:bench', logGroupName: 'bench', logStreamName: 'bench',
  callbackWaitsForEmptyEventLoop: true, getRemainingTimeInMillis: () => 10000 });
const wall = []; let failures = 0; let firstFailure; let firstInvokeMs = 0; let cpu0;
for (let i = 0; i < events.length; i += 1) {
  if (i === 1) cpu0 = process.cpuUsage();
  const start = performance.now();
  let ok = true;
  try {
    const result = await handler(events[i], context(i));
    if (result && typeof result.statusCode === 'number' && result.statusCode >= 300) { ok = false; firstFailure ??= 'HTTP ' + result.statusCode + ' ' + String(result.body).slice(0, 200); }
  } catch (err) { ok = false; firstFailure ??= String(err && err.message); }
  const ms = performance.now() - start;
  if (!ok) failures += 1;
  if (i === 0) firstInvokeMs = ms; else wall.push(ms);
}
const cpu = process.cpuUsage(cpu0);
const memory = process.memoryUsage();
process.stdout.write(JSON.stringify({ initMs, firstInvokeMs, wall, failures, firstFailure, cpuMs: (cpu.user + cpu.system) / 1000,
  rss: memory.rss, heapUsed: memory.heapUsed, maxRss: process.resourceUsage().maxRSS * 1024 }));
process.exit(0);
`;

type ChildOutput = {
  initMs: number;
  firstInvokeMs: number;
  wall: number[];
  failures: number;
  firstFailure?: string;
  cpuMs: number;
  rss: number;
  heapUsed: number;
  maxRss: number;
};

const e164 = (area: string, n: number) => `+1${area}55${String(n).padStart(5, '0')}`;

function eventFor(
  route: RouteSpec,
  authorizer: Record<string, string>,
  path: string,
  pathParameters: Record<string, string> | null,
  body?: unknown,
  query = '',
) {
  return toProxyEvent({
    request: {
      method: route.method,
      rawPath: `${API_PREFIX}${path}`,
      rawQuery: query,
      rawHeaders: [
        'Authorization',
        'Bearer (checked by the authorizer)',
        ...(body === undefined ? [] : ['Content-Type', 'application/json']),
      ],
      body: body === undefined ? null : JSON.stringify(body),
      sourceIp: '127.0.0.1',
    },
    resource: `${API_PREFIX}${route.path}`,
    pathParameters,
    authorizer:
      route.auth === null ? null : { principalId: authorizer.keyId, context: authorizer, integrationLatency: 0 },
    requestId: 'bench',
    stage: 'local',
    now: new Date(),
  });
}

/** `count` events for one API function, each a request its handler answers with a success. */
async function eventsFor(
  route: RouteSpec,
  count: number,
  fixture: Fixture,
  authorizer: Record<string, string>,
): Promise<APIGatewayProxyEvent[]> {
  const pick = <T>(list: T[], i: number) => list[i % list.length];
  const ev = (i: number): APIGatewayProxyEvent | Promise<APIGatewayProxyEvent> => {
    switch (route.operationId) {
      case 'getCall':
        return eventFor(route, authorizer, `/calls/${pick(fixture.callIds, i)}`, { id: pick(fixture.callIds, i) });
      case 'getContact':
        return eventFor(route, authorizer, `/contacts/${pick(fixture.namedContactIds, i)}`, {
          id: pick(fixture.namedContactIds, i),
        });
      case 'updateContact':
        return eventFor(
          route,
          authorizer,
          `/contacts/${pick(fixture.namedContactIds, i)}`,
          { id: pick(fixture.namedContactIds, i) },
          { notes: `Invoke ${i}` },
        );
      case 'createContact':
        return eventFor(route, authorizer, '/contacts', null, {
          displayName: `Invoke ${i}`,
          phoneNumber: e164('628', i),
        });
      case 'upsertContacts':
        // A batch of 10 new contacts an event (the route takes up to 100; 120 events of 100 would be minutes of
        // DynamoDB Local).
        return eventFor(route, authorizer, '/contacts/batch', null, {
          contacts: Array.from({ length: 10 }, (_, k) => ({
            displayName: `Batched ${i}-${k}`,
            phoneNumber: e164('626', i * 10 + k),
            externalId: `invoke-${i}-${k}`,
          })),
        });
      case 'sendMessage':
        return eventFor(route, authorizer, '/messages', null, { to: e164('629', i), body: 'Invoked directly.' });
      case 'listMessages':
        return eventFor(route, authorizer, `/messages/${encodeURIComponent(fixture.conversation)}`, {
          counterpart: fixture.conversation,
        });
      default:
        return eventFor(route, authorizer, route.path, null);
    }
  };
  if (route.operationId === 'deleteContact') {
    // Rows to delete, made beforehand through the domain module.
    const made = await inPool(count, 8, (i) =>
      createContact(fixture.tenantId, { displayName: `Doomed ${i}`, phoneNumber: e164('627', i) }),
    );
    return made.map(({ contact }) => eventFor(route, authorizer, `/contacts/${contact.id}`, { id: contact.id }));
  }
  if (route.operationId === 'deleteContacts') {
    // Ten contacts an event, made beforehand through the domain module, deleted by external id.
    const made = await inPool(count * 10, 8, (i) =>
      createContact(fixture.tenantId, {
        displayName: `Doomed ${i}`,
        phoneNumber: e164('625', i),
        externalId: `doomed-${i}`,
      }),
    );
    return Array.from({ length: count }, (_, i) =>
      eventFor(route, authorizer, route.path, null, {
        contacts: made.slice(i * 10, i * 10 + 10).map(({ contact }) => ({ externalId: contact.externalId })),
      }),
    );
  }
  return Promise.all(Array.from({ length: count }, (_, i) => ev(i)));
}

function runChild(bundle: BuiltBundle, eventsFile: string, env: NodeJS.ProcessEnv): Promise<ChildOutput> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', CHILD, bundle.file, eventsFile], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('exit', (code) => {
      const at = stdout.lastIndexOf('{"initMs"');
      if (code !== 0 || at === -1)
        return fail(new Error(stderr.trim().split('\n').slice(0, 3).join(' ') || `exit ${code}`));
      done(JSON.parse(stdout.slice(at)) as ChildOutput);
    });
  });
}

export async function measureInvocations(
  bundles: BuiltBundle[],
  fixture: Fixture,
  dynamodbEndpoint: string,
  outDir: string,
  count: number,
  progress: (line: string) => void,
): Promise<InvokeResult[]> {
  const contextOf = async (key: string) => {
    const decision = await authorizeAuthorizationHeader(`Bearer ${key}`);
    if (decision.effect !== 'allow') throw new Error('the benchmark key was refused');
    return principalToContext(decision.principal);
  };
  const authorizer = await contextOf(fixture.key);
  const senderAuthorizer = await contextOf(fixture.senderKey);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_OPTIONS: '--enable-source-maps',
    AWS_REGION: 'local',
    ...LOCAL_ENGINE_CREDENTIALS_ENV,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    TABLE_NAME: process.env.TABLE_NAME,
    DYNAMODB_ENDPOINT: dynamodbEndpoint,
    // For the reference bundle, whose client takes its endpoint from the SDK's own configuration.
    AWS_ENDPOINT_URL_DYNAMODB: dynamodbEndpoint,
    POWERTOOLS_SERVICE_NAME: 'cct-bench',
    POWERTOOLS_LOG_LEVEL: 'WARN',
    RATE_LIMIT_PER_KEY: '1000000',
    CARRIER: 'loopback',
    LOOPBACK_STATUS_DELAY_MS: '3600000',
    // What the stack gives the authorizer, which fails every invocation without them.
    [ROUTE_SCOPES_ENV]: encodeRoutePermissions(ROUTES, API_PREFIX),
    [USAGE_PLAN_KEY_PREFIX_ENV]: usagePlanKeyPrefixOf('CctService-bench'),
    [USAGE_PLAN_BUCKETS_ENV]: String(DEFAULT_USAGE_PLAN_BUCKETS),
  };
  const results: InvokeResult[] = [];
  const apiBundles = bundles.filter((b) => b.kind === 'reference' || b.kind === 'api' || b.kind === 'authorizer');
  for (const bundle of apiBundles) {
    let events: unknown[];
    if (bundle.kind === 'reference') {
      // The floor: one GetItem of a call row per invocation.
      events = Array.from({ length: count }, (_, i) =>
        callKey(fixture.tenantId, fixture.callIds[i % fixture.callIds.length]),
      );
    } else if (bundle.kind === 'authorizer') {
      events = Array.from({ length: count }, () => ({
        type: 'TOKEN',
        authorizationToken: `Bearer ${fixture.key}`,
        methodArn: 'arn:aws:execute-api:local:000000000000:api/local/GET/api/v1/me',
      }));
    } else {
      const route = ROUTES.find((r) => r.operationId === bundle.name)!;
      events = await eventsFor(
        route,
        count,
        fixture,
        route.operationId === 'sendMessage' ? senderAuthorizer : authorizer,
      );
    }
    const eventsFile = join(outDir, `events-${bundle.name}.json`);
    await writeFile(eventsFile, JSON.stringify(events));
    try {
      const out = await runChild(bundle, eventsFile, { ...env, LAMBDA_TASK_ROOT: dirname(bundle.file) });
      const result: InvokeResult = {
        name: bundle.name,
        invocations: count,
        failures: out.failures,
        ...(out.firstFailure && { firstFailure: out.firstFailure }),
        initMs: round(out.initMs, 1),
        firstInvokeMs: round(out.firstInvokeMs, 1),
        warmMs: distribution(out.wall),
        cpuMsPerInvoke: round(out.cpuMs / Math.max(1, count - 1), 2),
        rssMiB: round(out.rss / 2 ** 20, 1),
        peakRssMiB: round(out.maxRss / 2 ** 20, 1),
        heapUsedMiB: round(out.heapUsed / 2 ** 20, 1),
      };
      results.push(result);
    } catch (err) {
      progress(`  ${bundle.name}: ${(err as Error).message}`);
    }
  }
  return results;
}
