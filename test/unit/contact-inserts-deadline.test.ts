import 'aws-sdk-client-mock-jest';
import { mockClient } from 'aws-sdk-client-mock';
import { BatchGetCommand, DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { insertNewContacts } from '../../lambdas/contexts/contacts/contact-inserts';
import { runWithDeadline } from '../../lambdas/shared/deadline';

/**
 * A batch's new contacts go in a few transactions of up to 100 items; a burst of batches at once can keep them
 * queued for seconds. Past the request's deadline (less the second an item needs) no further transaction starts,
 * and its contacts come back unwritten, for the batch to answer `unavailable` before API Gateway's 29 s.
 */
const ddb = mockClient(DynamoDBDocumentClient);
const TENANT = '01900000-0000-7000-8000-000000000001';
const inputs = Array.from({ length: 30 }, (_, i) => ({
  displayName: `Contact ${i}`,
  phoneNumber: `+1415555${String(1000 + i)}`,
}));

beforeEach(() => {
  ddb.reset();
  ddb.on(BatchGetCommand).resolves({ Responses: {} });
  ddb.on(TransactWriteCommand).resolves({});
});

it('starts no transaction with less than a second left, and hands every contact back unwritten', async () => {
  // Act
  const result = await runWithDeadline(Date.now() + 500, () => insertNewContacts(TENANT, inputs, new Date()));
  // Assess
  expect(ddb).not.toHaveReceivedCommand(TransactWriteCommand);
  expect(result).toEqual({ created: [], refused: inputs });
});

it('with time left writes every contact, in several transactions', async () => {
  // Act
  const result = await runWithDeadline(Date.now() + 60_000, () => insertNewContacts(TENANT, inputs, new Date()));
  // Assess
  expect(result.created.map((contact) => contact.displayName)).toEqual(inputs.map((input) => input.displayName));
  expect(result.refused).toEqual([]);
  expect(ddb.commandCalls(TransactWriteCommand).length).toBeGreaterThan(1);
});
