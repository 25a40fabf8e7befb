import 'aws-sdk-client-mock-jest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { mockClient } from 'aws-sdk-client-mock';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { NamedTransaction } from '../../lambdas/shared/table/named-transaction';
import type { TransactItem } from '../../lambdas/shared/table/dynamo';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

/** A cancelled transaction with one reason per item, as DynamoDB reports it. */
const cancelled = (...reasons: { Code: string; Item?: Record<string, unknown> }[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: reasons.map((r) => ({ Code: r.Code, ...(r.Item && { Item: marshall(r.Item) }) })),
  });

const put = (sk: string): TransactItem => ({ Put: { TableName: 't', Item: { pk: 'P', sk } } });
const check = (sk: string): TransactItem => ({
  ConditionCheck: { TableName: 't', Key: { pk: 'P', sk }, ConditionExpression: 'c' },
});

describe('NamedTransaction', () => {
  it('sends its items in the order they were added, a group and a left-out item included', async () => {
    // Prepare
    ddb.on(TransactWriteCommand).resolves({});
    const tx = new NamedTransaction()
      .add('claim', put('claim'))
      .add('optional', undefined)
      .add('rows', put('r1'), put('r2'))
      .addAll({ ledger: check('ledger'), nothing: undefined, more: [put('m1')] });
    // Act
    const refusal = await tx.write();
    // Assess
    expect(refusal).toBeUndefined();
    expect(ddb).toHaveReceivedCommandWith(TransactWriteCommand, {
      TransactItems: [put('claim'), put('r1'), put('r2'), check('ledger'), put('m1')],
    });
  });

  it('answers a refusal by the names whose conditions failed, with the item DynamoDB returned', async () => {
    // Prepare
    ddb
      .on(TransactWriteCommand)
      .rejects(
        cancelled(
          { Code: 'ConditionalCheckFailed', Item: { contactId: 'c1' } },
          { Code: 'None' },
          { Code: 'None' },
          { Code: 'ConditionalCheckFailed' },
        ),
      );
    const tx = new NamedTransaction<'claim' | 'rows' | 'ledger'>()
      .add('claim', put('claim'))
      .add('rows', put('r1'), put('r2'))
      .add('ledger', check('ledger'));
    // Act
    const refusal = await tx.write();
    // Assess
    expect(refusal?.failed('claim')).toEqual({ item: { contactId: 'c1' } });
    expect(refusal?.failed('rows')).toBeUndefined();
    expect(refusal?.failed('ledger')).toEqual({ item: undefined });
    expect(refusal?.failedNames).toEqual(['claim', 'ledger']);
    expect(refusal?.contention).toBe(false);
    expect(refusal?.codes).toBe('ConditionalCheckFailed, None, None, ConditionalCheckFailed');
    expect(refusal?.error).toBeInstanceOf(TransactionCanceledException);
  });

  it('never shifts the blame when an item is added before the one that failed', async () => {
    // Prepare: the same failure (the ledger), once without and once with an extra item in front
    const without = new NamedTransaction().add('claim', put('claim')).add('ledger', check('ledger'));
    const withExtra = new NamedTransaction()
      .add('search', put('s1'), put('s2'))
      .add('claim', put('claim'))
      .add('ledger', check('ledger'));
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'ConditionalCheckFailed' }))
      .rejectsOnce(cancelled({ Code: 'None' }, { Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }));
    // Act
    const first = await without.write();
    const second = await withExtra.write();
    // Assess
    expect(first?.failedNames).toEqual(['ledger']);
    expect(second?.failedNames).toEqual(['ledger']);
  });

  it('throws contention (a conflict or a throttle, nothing failed a condition), and reads it as such when asked', async () => {
    // Prepare
    const conflict = cancelled({ Code: 'None' }, { Code: 'TransactionConflict' });
    ddb.on(TransactWriteCommand).rejects(conflict);
    const tx = new NamedTransaction().add('a', put('a')).add('b', put('b'));
    // Act
    const outcome = tx.write();
    // Assess
    await expect(outcome).rejects.toBe(conflict);
    expect(tx.refusalOf(conflict)?.contention).toBe(true);
    expect(tx.refusalOf(conflict)?.failedNames).toEqual([]);
  });

  it('passes any other error through, and reads nothing into it', async () => {
    // Prepare
    const other = new Error('network');
    ddb.on(TransactWriteCommand).rejects(other);
    const tx = new NamedTransaction().add('a', put('a'));
    // Act
    const outcome = tx.write();
    // Assess
    await expect(outcome).rejects.toBe(other);
    expect(tx.refusalOf(other)).toBeUndefined();
  });

  it('refuses a name added twice: two parts must not share a blame', () => {
    // Prepare
    const tx = new NamedTransaction().add('claim', put('a'));
    // Act / Assess
    expect(() => tx.add('claim', put('b'))).toThrow(/"claim" added twice/);
  });
});

/** No code outside the builder reads a transaction's refusal by position. */
describe('transaction refusals', () => {
  const REPO_ROOT = resolve(__dirname, '..', '..');
  const EXCLUDED = new Set([
    'lambdas/shared/table/named-transaction.ts', // the one place that maps positions to names
    'lambdas/shared/table/contention.ts', // reads the codes as a whole (contention or not), never one by index
  ]);
  const sources = (dir: string): string[] =>
    readdirSync(join(REPO_ROOT, dir)).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(join(REPO_ROOT, path)).isDirectory()) return name === 'node_modules' ? [] : sources(path);
      return path.endsWith('.ts') ? [path] : [];
    });
  const POSITIONAL = [
    /CancellationReasons\s*(\?\.)?\s*\[/, // CancellationReasons[1]
    /CancellationReasons\b/, // any other reading of the raw list
    /failedCondition\s*\(/, // the old helper that took an index
    /\breasons\s*(\?\.)?\s*\[/i, // reasons[2]
    /\breasons\s*(\?\.)?\s*\.\s*(slice|at)\s*\(/i, // reasons.slice(0, n)
    /const\s*\[[^\]]*\]\s*=\s*[\w.?]*(refused|reasons|refusal)\b/i, // const [consent, charge] = stored.refused
  ];
  const offenders = (text: string) => POSITIONAL.filter((pattern) => pattern.test(text)).map(String);

  it('is read by name everywhere in lambdas/ and local/ (the limits engine writes the wire format, and is left out)', () => {
    // Prepare
    const files = [...sources('lambdas'), ...sources('local')].filter(
      (path) => !EXCLUDED.has(path) && !path.startsWith(join('local', 'dynamodb-limits')),
    );
    // Act
    const found = files.flatMap((path) =>
      offenders(readFileSync(join(REPO_ROOT, path), 'utf8')).map((pattern) => `${relative('.', path)}: ${pattern}`),
    );
    // Assess
    expect(files.length).toBeGreaterThan(100);
    expect(found).toEqual([]);
  });

  it('catches the ways a refusal used to be read by position', () => {
    // Prepare
    const old = [
      'if (failedCondition(reasons, 1 + externalIdWrites.length)) throw conflict;',
      'const code = err.CancellationReasons?.[2]?.Code;',
      'if (reasons[0].code === "ConditionalCheckFailed") return LOST_RACE;',
      'return { refused: reasons.slice(0, alongside.length) };',
      'const [consent, charged, key] = stored.refused;',
    ];
    // Act / Assess
    for (const line of old) expect(offenders(line)).not.toEqual([]);
  });
});
