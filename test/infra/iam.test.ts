import { ROUTES, type RouteId } from '../../lambdas/handlers/api/routes';
import { WRITE_ACTIONS } from '../../lib/constructs/table';
import { actionsOf, dynamoStatements, logicalIdOf, statementsOfFunction, synth, type Statement } from './support';

const RATE_LIMIT_ROWS = { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*#RATE#*'] } };

/** Table access of a function as `action -> resources`, with conditioned statements apart. */
function tableAccess(statements: Statement[], tableId: string) {
  const tableArn = { 'Fn::GetAtt': [tableId, 'Arn'] };
  const onTable = new Set<string>();
  const onIndexes = new Map<string, Set<string>>();
  const conditioned: Statement[] = [];
  for (const statement of dynamoStatements(statements)) {
    if (statement.Condition) {
      conditioned.push(statement);
      continue;
    }
    const resources = Array.isArray(statement.Resource) ? statement.Resource : [statement.Resource];
    for (const resource of resources) {
      const json = JSON.stringify(resource);
      const index = /"\/index\/([^"]+)"/.exec(json)?.[1];
      for (const action of actionsOf(statement)) {
        if (index && json.includes(tableId)) onIndexes.set(action, new Set([...(onIndexes.get(action) ?? []), index]));
        else if (JSON.stringify(resource) === JSON.stringify(tableArn)) onTable.add(action);
        else throw new Error(`Unexpected DynamoDB resource ${json}`);
      }
    }
  }
  return {
    onTable: [...onTable].sort(),
    onIndexes: Object.fromEntries([...onIndexes].map(([a, i]) => [a, [...i].sort()])),
    conditioned,
  };
}

function accessOf(operationId: RouteId) {
  const { stack, template } = synth();
  const fnId = logicalIdOf(stack, stack.api.routeFunctions[operationId]);
  return tableAccess(statementsOfFunction(template, fnId), logicalIdOf(stack, stack.table.table));
}

describe('least-privilege IAM', () => {
  it('never grants a wildcard action, to any role of the stack', () => {
    const { template } = synth();

    const policies = Object.values(template.findResources('AWS::IAM::Policy'));
    const actions = policies.flatMap((p) => (p.Properties.PolicyDocument.Statement as Statement[]).flatMap(actionsOf));

    expect(actions.length).toBeGreaterThan(0);
    expect(actions.filter((a) => a.includes('*'))).toEqual([]);
  });

  it('gives the functions their own roles without managed policies', () => {
    const { stack, template } = synth();

    const lambdaRoles = Object.entries(template.findResources('AWS::IAM::Role')).filter(([, role]) =>
      JSON.stringify(role.Properties.AssumeRolePolicyDocument).includes('lambda.amazonaws.com'),
    );

    // Exactly one role per function of the factory, none shared.
    const roleIds = stack.functions.functions.map((fn) => logicalIdOf(stack, fn.role!)).sort();
    expect(lambdaRoles.map(([id]) => id).sort()).toEqual(roleIds);
    expect(new Set(roleIds).size).toBe(roleIds.length);
    for (const [, role] of lambdaRoles) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
  });

  it('lets each function write only its own log group', () => {
    const { stack, template } = synth();

    for (const fn of [...Object.values(stack.api.routeFunctions), stack.api.authorizerFunction]) {
      const statements = statementsOfFunction(template, logicalIdOf(stack, fn));
      const logs = statements.filter((s) => actionsOf(s).some((a) => a.startsWith('logs:')));
      expect(logs).toEqual([
        expect.objectContaining({
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: { 'Fn::GetAtt': [logicalIdOf(stack, fn.logGroup), 'Arn'] },
        }),
      ]);
    }
  });

  it('lets the authorizer read rows by key and nothing else', () => {
    const { stack, template } = synth();

    const access = tableAccess(
      statementsOfFunction(template, logicalIdOf(stack, stack.api.authorizerFunction)),
      logicalIdOf(stack, stack.table.table),
    );

    expect(access).toEqual({ onTable: ['dynamodb:GetItem'], onIndexes: {}, conditioned: [] });
  });

  it('gives GET /openapi.json no table access at all', () => {
    expect(accessOf('getOpenApi')).toEqual({ onTable: [], onIndexes: {}, conditioned: [] });
  });

  it('lets every keyed route count its request in the rate-limit window rows, and only there', () => {
    for (const route of ROUTES.filter((r) => r.auth === 'apiKey')) {
      const { conditioned } = accessOf(route.operationId as RouteId);
      // A route confined to partitions of its own (GET /consent) has that statement too: tested below.
      const others = conditioned.filter((s) => JSON.stringify(s.Condition) !== JSON.stringify(RATE_LIMIT_ROWS));

      expect(conditioned.filter((s) => !others.includes(s))).toEqual([
        expect.objectContaining({ Action: 'dynamodb:UpdateItem', Condition: RATE_LIMIT_ROWS }),
      ]);
      expect(others.flatMap(actionsOf).filter((a) => WRITE_ACTIONS.includes(a as never))).toEqual([]);
    }
  });

  it("lets GET /consent read the numbers' ledger partitions (a row and a page of history) and nothing else", () => {
    const { onTable, onIndexes, conditioned } = accessOf('getConsent');

    expect({ onTable, onIndexes }).toEqual({ onTable: [], onIndexes: {} });
    expect(conditioned).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          Action: ['dynamodb:GetItem', 'dynamodb:Query'],
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['T#*#CONSENT#*'] } },
        }),
      ]),
    );
    expect(conditioned).toHaveLength(2);
  });

  it('gives read routes no write action outside the rate-limit rows', () => {
    const reads = ROUTES.filter((r) => r.method === 'GET');

    for (const route of reads) {
      const { onTable, onIndexes } = accessOf(route.operationId as RouteId);

      expect(onTable.filter((a) => WRITE_ACTIONS.includes(a as never))).toEqual([]);
      expect(Object.keys(onIndexes).filter((a) => a !== 'dynamodb:Query')).toEqual([]);
    }
    expect(reads.map((r) => r.operationId)).toEqual(
      expect.arrayContaining(['listCalls', 'getCall', 'listContacts', 'getContact', 'getMe']),
    );
  });

  it.each([
    ['getMe', [], {}],
    ['getCall', ['dynamodb:GetItem'], {}],
    ['getContact', ['dynamodb:GetItem'], {}],
    ['listCalls', ['dynamodb:Query'], { 'dynamodb:Query': ['gsi1'] }],
    [
      'listContacts',
      ['dynamodb:BatchGetItem', 'dynamodb:Query'],
      { 'dynamodb:Query': ['changes', 'directory', 'externalIds', 'gsi1'] },
    ],
    ['listThreads', ['dynamodb:BatchGetItem', 'dynamodb:Query'], { 'dynamodb:Query': ['gsi2'] }],
    ['listMessages', ['dynamodb:Query'], { 'dynamodb:Query': ['gsi1'] }],
    [
      'createContact',
      [
        'dynamodb:ConditionCheckItem',
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ],
      {},
    ],
    [
      'updateContact',
      [
        'dynamodb:ConditionCheckItem',
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ],
      {},
    ],
    ['deleteContact', ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem'], {}],
    [
      'deleteContacts',
      ['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      {},
    ],
    [
      'upsertContacts',
      [
        'dynamodb:BatchGetItem',
        'dynamodb:ConditionCheckItem',
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
      ],
      {},
    ],
    [
      'sendMessage',
      [
        'dynamodb:BatchGetItem',
        'dynamodb:ConditionCheckItem',
        // A carrier opt-out cancels the number's scheduled texts: its rows (Query) and each one's row (DeleteItem).
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
      ],
      {},
    ],
    [
      'recordConsent',
      [
        'dynamodb:ConditionCheckItem',
        // An opt-out cancels the number's scheduled texts: its rows (Query) and each one's row (DeleteItem).
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
      ],
      {},
    ],
  ] as const)('grants %s exactly the table actions its domain code sends', (operationId, onTable, onIndexes) => {
    const access = accessOf(operationId as RouteId);

    expect(access.onTable).toEqual(onTable);
    expect(access.onIndexes).toEqual(onIndexes);
  });
});
