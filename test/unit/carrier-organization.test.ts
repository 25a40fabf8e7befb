import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { resolveOrganization } from '../../lambdas/contexts/carrier/organization';
import { numberOwnerKey } from '../../lambdas/contexts/tenants/tenants';
import { batchGetAnswerOf } from '../support/batch-get-answer';

const ddb = mockClient(DynamoDBDocumentClient);
beforeEach(() => ddb.reset());

const tenantId = '0199a000-0000-7000-8000-000000000001';
const ORG_NUMBER = '+16400000000';
const CALLER = '+16420000001';
const ownerRow = (number: string, owner: string) => ({
  ...numberOwnerKey(number),
  type: 'numberOwner',
  tenantId: owner,
  number,
});

describe("a callback's organization, found from its leg's numbers", () => {
  it("reads both of a leg's numbers in one BatchGetItem, not a GetItem each", async () => {
    // Prepare
    ddb.on(BatchGetCommand).callsFake(batchGetAnswerOf(ownerRow(ORG_NUMBER, tenantId)));
    // Act
    const resolved = await resolveOrganization({ ownNumbers: [ORG_NUMBER], legNumbers: [CALLER, ORG_NUMBER] });
    // Assess
    expect(resolved).toEqual({
      found: true,
      organization: { tenantId, orgNumbers: new Set([ORG_NUMBER]), via: 'number' },
    });
    expect(ddb).toHaveReceivedCommandTimes(BatchGetCommand, 1);
    expect(ddb).not.toHaveReceivedCommand(GetCommand);
    const keys = Object.values(ddb.commandCalls(BatchGetCommand)[0].args[0].input.RequestItems!)[0].Keys!;
    expect(keys.map((key) => key.pk).sort()).toEqual([numberOwnerKey(CALLER).pk, numberOwnerKey(ORG_NUMBER).pk].sort());
  });

  it("tells the organization's numbers from another organization's on the same leg", async () => {
    // Prepare
    const other = '0199a000-0000-7000-8000-000000000002';
    ddb.on(BatchGetCommand).callsFake(batchGetAnswerOf(ownerRow(ORG_NUMBER, tenantId), ownerRow(CALLER, other)));
    // Act
    const resolved = await resolveOrganization({ ownNumbers: [ORG_NUMBER], legNumbers: [CALLER, ORG_NUMBER] });
    // Assess
    expect(resolved).toEqual({
      found: true,
      organization: { tenantId, orgNumbers: new Set([ORG_NUMBER]), via: 'number' },
    });
  });

  it('reads a single number with one GetItem', async () => {
    // Prepare
    ddb.on(GetCommand).resolves({ Item: ownerRow(ORG_NUMBER, tenantId) });
    // Act
    const resolved = await resolveOrganization({ ownNumbers: [ORG_NUMBER], legNumbers: [ORG_NUMBER] });
    // Assess
    expect(resolved).toMatchObject({ found: true, organization: { tenantId } });
    expect(ddb).toHaveReceivedCommandTimes(GetCommand, 1);
    expect(ddb).not.toHaveReceivedCommand(BatchGetCommand);
  });
});
