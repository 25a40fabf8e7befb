// The architecture's import rules, checked by `npm run lint` (dependency-cruiser) on every change.
// docs/architecture.md explains them; test/unit/architecture-rules.test.ts proves each one fails on
// a wrong import. dependency-cruiser rather than ESLint's import plugins: it counts type-only imports
// (`tsPreCompilationDeps`) in cycles and layers, and it can follow reachability (rule cdk-loads-no-runtime).

/**
 * Which other contexts each bounded context may import (a directed acyclic graph, lowest first).
 * A folder of lambdas/contexts/ not listed here may import nothing (rule context-in-the-map), and no
 * listed context may import it, until it is added.
 */
const CONTEXT_DEPENDENCIES = {
  tenants: [],
  consent: [],
  contacts: ['consent'],
  calls: ['contacts'],
  texting: ['consent', 'contacts', 'tenants'],
  webhooks: ['calls', 'consent', 'contacts', 'texting', 'tenants'],
  carrier: ['calls', 'consent', 'contacts', 'texting', 'tenants'],
};

const TOOLING = '^(lib|local|bin|bench|test)/';

/** One rule per context: it may import itself, its allowed contexts and shared/, nothing else of lambdas/contexts. */
const contextRules = Object.entries(CONTEXT_DEPENDENCIES).map(([context, allowed]) => ({
  name: `context-${context}`,
  severity: 'error',
  comment:
    `contexts/${context} may import ${allowed.length ? allowed.map((c) => `contexts/${c}`).join(', ') : 'no other context'} ` +
    '(CONTEXT_DEPENDENCIES in .dependency-cruiser.cjs, docs/architecture.md). Move the rule to the context that owns the data, ' +
    'or change the map if the architecture itself changes.',
  from: { path: `^lambdas/contexts/${context}/` },
  to: {
    path: '^lambdas/contexts/',
    pathNot: [`^lambdas/contexts/${context}/`, ...allowed.map((c) => `^lambdas/contexts/${c}/`)],
  },
}));

const config = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No import cycles, type-only imports included: split the shared part into a module both sides import.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-is-the-floor',
      severity: 'error',
      comment: 'lambdas/shared is infrastructure no context owns: it imports nothing of lambdas/ outside shared/.',
      from: { path: '^lambdas/shared/' },
      to: { path: '^(lambdas|lib|local|bin|bench|test)/', pathNot: '^lambdas/shared/' },
    },
    {
      name: 'contexts-point-inward',
      severity: 'error',
      comment:
        'A context (the domain) never imports a handler, a route manifest, the middleware, the local runtime, the CDK app or a test: ' +
        'handlers call contexts, not the other way round.',
      from: { path: '^lambdas/contexts/' },
      to: { path: `^lambdas/handlers/|${TOOLING}` },
    },
    ...contextRules,
    {
      name: 'context-in-the-map',
      severity: 'error',
      comment:
        'Every folder of lambdas/contexts/ is a context of CONTEXT_DEPENDENCIES (.dependency-cruiser.cjs): add it there, with what it may import.',
      from: { path: `^lambdas/contexts/(?!(${Object.keys(CONTEXT_DEPENDENCIES).join('|')})/)` },
      to: {},
    },
    {
      name: 'context-internals-between-contexts',
      severity: 'error',
      comment: "A context's internal/ folder is its own: other contexts use the modules at its root.",
      from: { path: '^lambdas/contexts/([^/]+)/' },
      to: { path: '^lambdas/contexts/[^/]+/internal/', pathNot: '^lambdas/contexts/$1/' },
    },
    {
      name: 'context-internals-from-outside',
      severity: 'error',
      comment:
        "A context's internal/ folder is its own: handlers, the local runtime, the CDK app and the benchmark use the modules at its root (tests may reach in).",
      from: { pathNot: '^(lambdas/contexts/|test/)' },
      to: { path: '^lambdas/contexts/[^/]+/internal/' },
    },
    {
      name: 'lambdas-import-no-tooling',
      severity: 'error',
      comment:
        'Lambda code is bundled alone: it never imports the CDK app, the local runtime, the CLI, the benchmark or tests.',
      from: { path: '^lambdas/' },
      to: { path: TOOLING },
    },
    {
      name: 'no-tests-in-production-code',
      severity: 'error',
      comment: 'The CDK app, the local runtime and the CLI never import tests or the benchmark.',
      from: { path: '^(lib|local|bin)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'manifest-imports-operations-one-way',
      severity: 'error',
      comment:
        'An operation spec (handlers/api/operations/) imports only its request schemas and the RouteSpec type (handlers/http/route-spec.ts): ' +
        'never the manifest that lists it, a handler, the middleware or domain code, so the CDK reads it without the handler code.',
      from: { path: '^lambdas/handlers/api/operations/' },
      to: {
        path: '^lambdas/',
        pathNot: [
          '^lambdas/handlers/http/route-spec\\.ts$',
          '^lambdas/contexts/[^/]+/requests/',
          '^lambdas/shared/schemas/',
          '^lambdas/contexts/tenants/scopes\\.ts$',
        ],
      },
    },
    {
      name: 'handler-imports-its-own-operation',
      severity: 'error',
      comment:
        "A handler's bundle builds the request schemas of the routes it imports: its own operation module only, never the manifest " +
        '(every route, ~10 ms more cold init) or another route (lambdas/handlers/api/routes.ts).',
      from: { path: '^lambdas/handlers/api/([^/]+)\\.ts$', pathNot: '^lambdas/handlers/api/routes\\.ts$' },
      // Type-only imports leave nothing in the bundle: `import type { RouteId }` from the manifest is fine.
      to: {
        path: '^lambdas/handlers/api/(routes\\.ts$|operations/)',
        pathNot: '^lambdas/handlers/api/operations/$1\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'cdk-loads-no-runtime',
      severity: 'error',
      comment:
        'The CDK app reads specs (route manifests, table schema, key prefixes, filter criteria), never runtime code: nothing it imports may ' +
        'reach the module that creates the SDK clients (lambdas/shared/aws.ts) or the middleware.',
      from: { path: '^(lib|bin/app\\.ts$)' },
      to: { path: '^lambdas/shared/aws\\.ts$|^node_modules/@middy/', reachable: true },
    },
  ],
  options: {
    // Type-only imports count: `import type` cycles and layer breaks are refused like any other.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages stay in the graph as leaves (rule cdk-loads-no-runtime looks for @middy), unfollowed.
    doNotFollow: { path: '(^|/)node_modules/' },
    exclude: { path: '^(cdk\\.out|\\.local|bench/out|coverage)/' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};

// For the tests (test/unit/architecture-*.test.ts: a wrong import per context, and docs/architecture.md
// against the map); not enumerable, because dependency-cruiser refuses configuration keys it does not know.
Object.defineProperty(config, 'contextDependencies', { value: CONTEXT_DEPENDENCIES, enumerable: false });

module.exports = config;
