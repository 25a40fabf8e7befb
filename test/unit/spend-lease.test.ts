import { mockClient } from 'aws-sdk-client-mock';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SettlementLease } from '../../lambdas/contexts/texting/spend-lease';

/**
 * The settlement lease's answers to DynamoDB's refusals (texting/spend-lease.ts): a failed condition is "held" or
 * "no longer mine"; anything else is the caller's to see. Its behaviour on the engine is
 * integration/spend-lease.test.ts's.
 */
const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const lease = new SettlementLease('0199a000-0000-7000-8000-000000000001');
const held = { holder: 'h', untilMs: 1, fence: 1 };
const conditionFailed = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
const throttled = () => Object.assign(new Error('Rate exceeded'), { name: 'ProvisionedThroughputExceededException' });

describe('the settlement lease', () => {
  it('answers a claim another writer holds with no lease, and lets any other failure through', async () => {
    // Prepare
    ddb.on(UpdateCommand).rejectsOnce(conditionFailed()).rejectsOnce(throttled());
    // Act + Assess
    await expect(lease.claim()).resolves.toBeUndefined();
    await expect(lease.claim()).rejects.toThrow('Rate exceeded');
  });

  it('lets a release go when the lease is no longer its holder’s, and lets any other failure through', async () => {
    // Prepare
    ddb.on(UpdateCommand).rejectsOnce(conditionFailed()).rejectsOnce(throttled());
    // Act + Assess
    await expect(lease.release(held)).resolves.toBeUndefined();
    await expect(lease.release(held)).rejects.toThrow('Rate exceeded');
  });
});
