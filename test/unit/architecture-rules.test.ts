import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * The import rules of .dependency-cruiser.cjs (`npm run lint`), run by the real tool with the real
 * configuration on a small tree shaped like this repository: every rule must refuse its wrong
 * import, and the imports the architecture allows must pass. The expected list is exact, so a rule
 * that stops firing and a rule that fires on an allowed import both fail here.
 */
const REPO_ROOT = resolve(__dirname, '..', '..');
const DEPCRUISE = join(REPO_ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const CONFIG = join(REPO_ROOT, '.dependency-cruiser.cjs');
// The lint's CommonJS configuration, read as the tool reads it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require(CONFIG) as { forbidden: { name: string }[]; contextDependencies: Record<string, string[]> };

/** The tree: `path -> source`. Comments mark the wrong imports; everything else is allowed. */
const TREE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'preserve', moduleResolution: 'bundler', strict: true },
  }),
  'node_modules/@middy/core/package.json': JSON.stringify({ name: '@middy/core', main: 'index.js' }),
  'node_modules/@middy/core/index.js': 'export default function middy() {}\n',

  // shared/: the floor
  'lambdas/shared/aws.ts': 'export const dynamo = {};\n',
  'lambdas/shared/config.ts':
    "import { tenantName } from '../contexts/tenants/tenants'; // WRONG: shared imports a context\nexport const name " +
    '= tenantName;\n',
  'lambdas/shared/schemas/id-path.ts': 'export const IdPath = {};\n',

  // contexts/
  'lambdas/contexts/tenants/tenants.ts':
    "import { dynamo } from '../../shared/aws';\nexport const tenantName = String(dynamo);\n",
  'lambdas/contexts/tenants/scopes.ts': "export type Scope = 'calls.view.team';\n",
  'lambdas/contexts/contacts/contacts.ts': [
    "import { dynamo } from '../../shared/aws';",
    "import { routes } from '../../handlers/api/routes'; // WRONG: the domain imports a route manifest",
    "import { ListCallsQuery } from '../calls/requests/list-calls'; // WRONG: contacts may import no other context",
    'export const contacts = [dynamo, routes, ListCallsQuery];',
  ].join('\n'),
  'lambdas/contexts/contacts/requests/create-contact.ts': 'export const CreateContactBody = {};\n',
  // A cycle of type-only imports is a cycle.
  'lambdas/contexts/contacts/cycle-a.ts': "import type { B } from './cycle-b';\nexport type A = { b?: B };\n",
  'lambdas/contexts/contacts/cycle-b.ts': "import type { A } from './cycle-a';\nexport type B = { a?: A };\n",
  'lambdas/contexts/calls/calls.ts': [
    "import { contacts } from '../contacts/contacts';",
    "import { dynamo } from '../../shared/aws';",
    "import { cliArgs } from '../../../local/cli-args'; // WRONG: the domain imports the local runtime",
    'export const calls = [contacts, dynamo, cliArgs];',
  ].join('\n'),
  'lambdas/contexts/calls/requests/list-calls.ts': 'export const ListCallsQuery = {};\n',
  'lambdas/contexts/texting/texting.ts':
    "import { contacts } from '../contacts/contacts';\nimport { costOf } from './internal/billing';\nexport const " +
    'sendText = [contacts, costOf];\n',
  'lambdas/contexts/texting/internal/billing.ts': 'export const costOf = 1;\n',
  'lambdas/contexts/webhooks/events.ts': [
    "import { calls } from '../calls/calls';",
    "import { costOf } from '../texting/internal/billing'; // WRONG: another context's internals",
    'export const events = [calls, costOf];',
  ].join('\n'),
  'lambdas/contexts/webhooks/filter-criteria.ts': 'export const PATTERNS = [];\n',
  // WRONG: a context folder that CONTEXT_DEPENDENCIES does not know
  'lambdas/contexts/ledger/ledger.ts': "import { dynamo } from '../../shared/aws';\nexport const ledger = dynamo;\n",

  // handlers/
  'lambdas/handlers/http/route-spec.ts':
    "import type { Scope } from '../../contexts/tenants/scopes';\nexport type RouteSpec = { scope: Scope | null };\n",
  'lambdas/handlers/http/api-handler.ts': "import middy from '@middy/core';\nexport const apiHandler = middy;\n",
  'lambdas/handlers/api/routes.ts':
    "import { getCallRoute } from './operations/get-call';\nimport { listCallsRoute } from " +
    "'./operations/list-calls';\nexport const routes = { getCallRoute, listCallsRoute };\n",
  'lambdas/handlers/api/operations/get-call.ts': [
    "import type { RouteSpec } from '../../http/route-spec';",
    "import { IdPath } from '../../../shared/schemas/id-path';",
    'export const getCallRoute: RouteSpec & { path: unknown } = { scope: null, path: IdPath };',
  ].join('\n'),
  'lambdas/handlers/api/operations/list-calls.ts': [
    "import { ListCallsQuery } from '../../../contexts/calls/requests/list-calls';",
    "import { PATTERNS } from '../../../contexts/webhooks/filter-criteria'; // WRONG: an operation spec imports " +
      'domain code',
    'export const listCallsRoute = { query: ListCallsQuery, PATTERNS };',
  ].join('\n'),
  'lambdas/handlers/api/operations/create-contact.ts': [
    "import { CreateContactBody } from '../../../contexts/contacts/requests/create-contact';",
    "import type { routes } from '../routes'; // WRONG: an operation imports the manifest",
    'export const createContactRoute = { body: CreateContactBody, all: undefined as unknown as typeof routes };',
  ].join('\n'),
  'lambdas/handlers/api/create-contact.ts':
    "import { createContactRoute } from './operations/create-contact';\nexport const handler = createContactRoute;\n",
  'lambdas/handlers/api/get-call.ts': [
    "import { apiHandler } from '../http/api-handler';",
    "import { calls } from '../../contexts/calls/calls';",
    "import { getCallRoute } from './operations/get-call';",
    "import type { routes } from './routes'; // allowed: a type-only import leaves nothing in the bundle",
    "import { listCallsRoute } from './operations/list-calls'; // WRONG: another route's operation",
    'export const handler = [apiHandler, calls, getCallRoute, listCallsRoute] as unknown as typeof routes;',
  ].join('\n'),
  'lambdas/handlers/api/list-calls.ts': [
    "import { listCallsRoute } from './operations/list-calls';",
    "import { routes } from './routes'; // WRONG: the whole manifest in a handler's bundle",
    'export const handler = [listCallsRoute, routes];',
  ].join('\n'),
  'lambdas/handlers/api/send-message.ts': [
    "import { sendText } from '../../contexts/texting/texting';",
    "import { costOf } from '../../contexts/texting/internal/billing'; // WRONG: a context's internals from a handler",
    'export const handler = [sendText, costOf];',
  ].join('\n'),
  'lambdas/handlers/webhooks/sender.ts':
    "import { cliArgs } from '../../../local/cli-args'; // WRONG: Lambda code imports the local runtime\nexport " +
    'const handler = cliArgs;\n',
  'local/cli-args.ts': 'export const cliArgs = [];\n',

  // the edges around lambdas/
  'local/runtime.ts': [
    "import { routes } from '../lambdas/handlers/api/routes';",
    "import { events } from '../lambdas/contexts/webhooks/events';",
    "import { seed } from '../test/support/seed'; // WRONG: production code imports a test helper",
    'export const startRuntime = [routes, events, seed];',
  ].join('\n'),
  'test/support/seed.ts': 'export const seed = 1;\n',
  'test/unit/billing.test.ts':
    "import { costOf } from '../../lambdas/contexts/texting/internal/billing'; // allowed: tests reach in\nexport " +
    'const t = costOf;\n',
  'lib/constructs/public-api.ts':
    "import { routes } from '../../lambdas/handlers/api/routes';\nimport { PATTERNS } from " +
    "'../../lambdas/contexts/webhooks/filter-criteria';\nexport const api = [routes, PATTERNS];\n",
  'lib/table-access.ts':
    "import { calls } from '../lambdas/contexts/calls/calls'; // WRONG: the CDK app reaches the SDK clients\nexport " +
    'const access = calls;\n',
  'lib/constructs/middleware.ts':
    "import { apiHandler } from '../../lambdas/handlers/http/api-handler'; // WRONG: the CDK app loads the " +
    'middleware\nexport const m = apiHandler;\n',
};

/**
 * One more wrong import per context, from the map itself: each context imports a context the map
 * does not allow it (a leaf module, so nothing else is broken), e.g. tenants -> contacts.
 */
const CONTEXTS = Object.keys(config.contextDependencies);
const contextViolations = CONTEXTS.map((context) => {
  const forbidden = CONTEXTS.find(
    (other) => other !== context && !config.contextDependencies[context].includes(other),
  )!;
  TREE[`lambdas/contexts/${forbidden}/leaf.ts`] = 'export const leaf = 1;\n';
  TREE[`lambdas/contexts/${context}/uses-${forbidden}.ts`] =
    `import { leaf } from '../${forbidden}/leaf'; // WRONG: not in the map\nexport const x = leaf;\n`;
  return `context-${context}: lambdas/contexts/${context}/uses-${forbidden}.ts -> lambdas/contexts/${forbidden}/leaf.ts`;
});

/** `rule: from -> to`, as dependency-cruiser reports them. */
const EXPECTED = [
  ...contextViolations,
  'shared-is-the-floor: lambdas/shared/config.ts -> lambdas/contexts/tenants/tenants.ts',
  'context-in-the-map: lambdas/contexts/ledger/ledger.ts -> lambdas/shared/aws.ts',
  'contexts-point-inward: lambdas/contexts/contacts/contacts.ts -> lambdas/handlers/api/routes.ts',
  'context-contacts: lambdas/contexts/contacts/contacts.ts -> lambdas/contexts/calls/requests/list-calls.ts',
  'no-circular: lambdas/contexts/contacts/cycle-a.ts -> lambdas/contexts/contacts/cycle-b.ts',
  'contexts-point-inward: lambdas/contexts/calls/calls.ts -> local/cli-args.ts',
  'lambdas-import-no-tooling: lambdas/contexts/calls/calls.ts -> local/cli-args.ts',
  'context-internals-between-contexts: lambdas/contexts/webhooks/events.ts -> ' +
    'lambdas/contexts/texting/internal/billing.ts',
  'manifest-imports-operations-one-way: lambdas/handlers/api/operations/list-calls.ts -> ' +
    'lambdas/contexts/webhooks/filter-criteria.ts',
  'manifest-imports-operations-one-way: lambdas/handlers/api/operations/create-contact.ts -> ' +
    'lambdas/handlers/api/routes.ts',
  'handler-imports-its-own-operation: lambdas/handlers/api/get-call.ts -> ' +
    'lambdas/handlers/api/operations/list-calls.ts',
  'handler-imports-its-own-operation: lambdas/handlers/api/list-calls.ts -> lambdas/handlers/api/routes.ts',
  'context-internals-from-outside: lambdas/handlers/api/send-message.ts -> ' +
    'lambdas/contexts/texting/internal/billing.ts',
  'lambdas-import-no-tooling: lambdas/handlers/webhooks/sender.ts -> local/cli-args.ts',
  'no-tests-in-production-code: local/runtime.ts -> test/support/seed.ts',
  'cdk-loads-no-runtime: lib/table-access.ts -> lambdas/shared/aws.ts',
  'cdk-loads-no-runtime: lib/constructs/middleware.ts -> node_modules/@middy/core/index.js',
];

type Violation = { from: string; to: string; rule: { name: string }; cycle?: unknown[] };

let workDir: string;
let violations: string[];

beforeAll(async () => {
  // Prepare: the tree in a directory of its own.
  workDir = await mkdtemp(join(tmpdir(), 'architecture-rules-'));
  for (const [path, source] of Object.entries(TREE)) {
    await mkdir(dirname(join(workDir, path)), { recursive: true });
    await writeFile(join(workDir, path), source);
  }
  // Act: the lint's own command, on that tree.
  const run = await promisify(execFile)(
    process.execPath,
    [DEPCRUISE, '--config', CONFIG, '--output-type', 'json', 'lambdas', 'lib', 'local', 'test'],
    { cwd: workDir, maxBuffer: 16 * 1024 * 1024 },
  ).catch((err: { stdout?: string }) => ({ stdout: err.stdout ?? '' })); // exits non-zero when it finds violations
  const report = JSON.parse(run.stdout) as { summary: { violations: Violation[] } };
  violations = report.summary.violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
}, 30_000);

afterAll(async () => {
  await rm(workDir, { recursive: true, force: true });
});

describe('the architecture rules (.dependency-cruiser.cjs)', () => {
  it('refuse every wrong import of the tree, each by the rule written for it, and nothing the architecture allows', () => {
    expect([...violations].sort()).toEqual([...EXPECTED].sort());
  });

  it.each(config.forbidden.map((rule) => rule.name))('%s refuses at least one import of the tree', (rule) => {
    expect(violations.some((v) => v.startsWith(`${rule}:`))).toBe(true);
  });

  it('let a test reach into a context, a handler import its own operation, and a type-only import of the manifest through', () => {
    const allowed = [
      'test/unit/billing.test.ts -> lambdas/contexts/texting/internal/billing.ts',
      'lambdas/handlers/api/get-call.ts -> lambdas/handlers/api/operations/get-call.ts',
      'lambdas/handlers/api/get-call.ts -> lambdas/handlers/api/routes.ts',
      'lambdas/contexts/texting/texting.ts -> lambdas/contexts/texting/internal/billing.ts',
      'lib/constructs/public-api.ts -> lambdas/handlers/api/routes.ts',
    ];
    for (const edge of allowed) expect(violations.filter((v) => v.endsWith(edge))).toEqual([]);
  });
});
