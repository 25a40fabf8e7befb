import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { retryWhileBusy } from '../support/busy-retry';
import { createTestTable } from '../support/table';
import { moneyLedgerOf } from '../support/ledger';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { uuidv7 } from '../../lambdas/shared/ids';
import { tenantPk } from '../../lambdas/shared/table/keys';
import { consentKey } from '../../lambdas/contexts/consent/ledger';
import { contactKey, createContact, getContact, numberClaimKey } from '../../lambdas/contexts/contacts/contacts';
import { createTenant, tenantKey } from '../../lambdas/contexts/tenants/tenants';
import { updateMessageStatus } from '../../lambdas/contexts/texting/delivery-status';
import { findMessageIdBySid, getMessage, messageKey } from '../../lambdas/contexts/texting/messages';
import type { Message } from '../../lambdas/contexts/texting/schemas';
import { sendMessage } from '../../lambdas/contexts/texting/sending';
import { spendOf } from '../../lambdas/contexts/texting/spend';
import { listThreads, threadKey } from '../../lambdas/contexts/texting/threads';
import { layoutMigrate } from '../../local/admin/commands/layout';

jest.setTimeout(120_000);
const context = { stateDir: '.local', runtime: undefined, emit: () => undefined, signal: new AbortController().signal };
type Result = { pages: number; moved: Record<string, number>; nextCursor: string | null };
const migrate = async (values: Record<string, string> = {}) => (await layoutMigrate.run(layoutMigrate.parse({ values, positionals: [] }), context)) as Result;

let organizations = 0;
const carrier = { name: 'loopback' as const, send: async () => ({ messageSid: `SM${uuidv7().replace(/-/g, '')}` }) };

/**
 * An organization as a stage deployed before this layout left it: its spend on its row, messages,
 * sid rows and threads in its own partition (`T#<org>` / `MSG#`, `MSGSID#`, `THREAD#`), and a
 * contact without the copy of its number's consent.
 */
async function legacyOrganization() {
  const ORG_NUMBER = `+1415555${String(9000 + (organizations += 1))}`;
  const tenant = await createTenant({ name: 'Legacy Org', smsNumber: ORG_NUMBER, spendingLimitCents: 100 });
  const pk = tenantPk(tenant.id);
  const put = (Item: Record<string, unknown>) => dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item }));
  const { Item: row } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: tenantKey(tenant.id) }));
  await put({ ...row, spendCents: 7 });
  const customer = '+14155551001';
  const message = (id: string, fields: Partial<Message> & Record<string, unknown>) => ({
    pk, sk: `MSG#${id}`, type: 'message', id, tenantId: tenant.id, direction: 'outbound', fromNumber: ORG_NUMBER, toNumber: customer,
    counterpartNumber: customer, body: 'Old text', status: 'queued', messageSid: '', agentId: null, isRead: true,
    createdAt: new Date().toISOString(), costCents: 1, segments: 1, gsi1pk: `${pk}#CONVERSATION#${customer}`, gsi1sk: `MSG#${id}`, ...fields,
  });
  const queuedId = uuidv7();
  const deliveredId = uuidv7();
  const inboundId = uuidv7();
  await put(message(deliveredId, { status: 'delivered', messageSid: 'SMdelivered' }));
  await put({ pk, sk: 'MSGSID#SMdelivered', type: 'messageSid', messageId: deliveredId, counterpartNumber: customer });
  await put(message(inboundId, { direction: 'inbound', fromNumber: customer, toNumber: ORG_NUMBER, status: 'received', messageSid: 'SMinbound', isRead: false, costCents: undefined }));
  await put({ pk, sk: 'MSGSID#SMinbound', type: 'messageSid', messageId: inboundId, counterpartNumber: customer });
  await put(message(queuedId, { gsi2pk: 'UNSETTLED#3', gsi2sk: `${new Date().toISOString()}#${tenant.id}#${queuedId}` }));
  await put({
    pk, sk: `THREAD#${customer}`, type: 'thread', counterpartNumber: customer, lastMessage: 'Old text', lastDirection: 'outbound', lastStatus: 'queued',
    lastAt: new Date().toISOString(), lastMessageId: queuedId, messageCount: 3, unreadCount: 1, gsi2pk: `${pk}#THREADS`, gsi2sk: `x#${queuedId}`,
  });
  // A contact written before contacts carried consent, whose number replied STOP.
  const contactId = uuidv7();
  const contactNumber = '+14155551002';
  await put({ ...numberClaimKey(tenant.id, contactNumber), type: 'numberClaim', contactId, named: true });
  await put({
    ...contactKey(tenant.id, contactId), type: 'contact', id: contactId, tenantId: tenant.id, displayName: 'Old Contact', phoneNumber: contactNumber,
    normalizedNumber: contactNumber, company: null, tag: null, notes: null, createdByAgentId: null, isAutoCreated: false, source: 'manual',
    createdAt: '2026-10-01T00:00:00.000Z', updatedAt: '2026-10-01T00:00:00.000Z',
  });
  await put({ ...consentKey(tenant.id, contactNumber), type: 'consent', number: contactNumber, consentStatus: 'opted_out', consentSource: 'sms_keyword', consentAt: '2026-10-02T00:00:00.000Z', consentNote: 'Replied STOP' });
  return { tenantId: tenant.id, pk, orgNumber: ORG_NUMBER, customer, queuedId, deliveredId, inboundId, contactId };
}

/** The rows still in the organization's partition under the old layout's sort keys. */
async function legacyRows(pk: string): Promise<string[]> {
  const { Items = [] } = await dynamo.send(new QueryCommand({ TableName: TABLE_NAME, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }));
  return Items.map((item) => item.sk as string).filter((sk) => /^(MSG#|MSGSID#|THREAD#)/.test(sk));
}

beforeAll(createTestTable);

describe('a stage deployed with the old key layout', () => {
  it('keeps serving before the migration: rows are found and written where they are, a legacy thread moves at its next message', async () => {
    // Prepare
    const org = await legacyOrganization();
    // Act
    const contact = await getContact(org.tenantId, org.contactId);
    const bySid = await findMessageIdBySid(org.tenantId, 'SMdelivered');
    const failed = await updateMessageStatus(org.tenantId, { messageId: org.queuedId }, 'failed');
    const { message } = await sendMessage(org.tenantId, { to: org.customer, body: 'New text' }, carrier);
    const threads = (await listThreads(org.tenantId, { limit: 10 })).items;
    // Assess
    expect(contact.consentStatus).toBe('opted_out'); // from the ledger, until the copy is migrated
    expect(bySid).toBe(org.deliveredId);
    expect(failed).toMatchObject({ changed: true, message: { status: 'failed' } });
    expect(await getMessage(org.tenantId, org.queuedId)).toMatchObject({ status: 'failed' });
    expect(threads).toEqual([expect.objectContaining({ counterpartNumber: org.customer, messageCount: 4, lastMessage: 'New text' })]);
    expect(await legacyRows(org.pk)).not.toContain(`THREAD#${org.customer}`);
    // The legacy spend moved onto the shards; the refund went to shard 0; the new text was charged on a shard.
    expect(await spendOf(org.tenantId)).toBe(7 - 1 + 1);
    expect(message.status).toBe('queued');
  });

  it('layout migrate moves every row once, resumably, and a second run finds nothing', async () => {
    // Prepare
    const org = await legacyOrganization();
    const spendBefore = (await moneyLedgerOf(org.tenantId)).spendCents;
    // Act: one page of one row, then on from its cursor, then the whole table again
    const first = await migrate({ 'page-size': '1', pages: '1' });
    const rest = await migrate({ cursor: first.nextCursor as string });
    const again = await migrate();
    // Assess
    expect(first.nextCursor).toEqual(expect.any(String));
    expect(await legacyRows(org.pk)).toEqual([]);
    expect(Object.values(again.moved).reduce((a, b) => a + b, 0)).toBe(0);
    expect(rest.nextCursor).toBeNull();
    const { Item: moved } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: messageKey(org.tenantId, org.queuedId), ConsistentRead: true }));
    expect(moved).toMatchObject({ status: 'queued', gsi2pk: 'UNSETTLED#3', movedAt: expect.any(Number) });
    expect(await findMessageIdBySid(org.tenantId, 'SMinbound')).toBe(org.inboundId);
    const { Item: thread } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: threadKey(org.tenantId, org.customer), ConsistentRead: true }));
    expect(thread).toMatchObject({ messageCount: 3, lastMessageId: org.queuedId, lastStatus: 'queued' });
    const { Item: tenantRow } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: tenantKey(org.tenantId), ConsistentRead: true }));
    expect(tenantRow).not.toHaveProperty('spendCents');
    expect(await spendOf(org.tenantId)).toBe(spendBefore);
    const { Item: contactRow } = await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: contactKey(org.tenantId, org.contactId), ConsistentRead: true }));
    expect(contactRow).toMatchObject({ consentStatus: 'opted_out', consentAt: '2026-10-02T00:00:00.000Z' });
  });

  it('runs while the API serves: status changes racing the moves all land, on the row wherever it is, and nothing is left behind', async () => {
    // Prepare: twenty queued texts of the old layout
    const org = await legacyOrganization();
    const ids = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const id = uuidv7();
        await dynamo.send(new PutCommand({
          TableName: TABLE_NAME,
          Item: {
            pk: org.pk, sk: `MSG#${id}`, type: 'message', id, tenantId: org.tenantId, direction: 'outbound', fromNumber: org.orgNumber, toNumber: org.customer,
            counterpartNumber: org.customer, body: 'Old', status: 'queued', messageSid: '', agentId: null, isRead: true, createdAt: new Date().toISOString(), costCents: 1, segments: 1,
          },
        }));
        return id;
      }),
    );
    // Act: the migration and a callback for every text at once
    await Promise.all([
      migrate(),
      // Twilio sends a callback answered busy (503) again.
      ...ids.map((id) => retryWhileBusy(() => updateMessageStatus(org.tenantId, { messageId: id, messageSid: `SM${id.replace(/-/g, '')}` }, 'delivered'))),
    ]);
    await migrate();
    // Assess
    expect(await legacyRows(org.pk)).toEqual([]);
    for (const id of ids) expect(await getMessage(org.tenantId, id)).toMatchObject({ status: 'delivered', messageSid: `SM${id.replace(/-/g, '')}` });
  });

  it("corrects a contact from before the consent ledger, whose stored consent later changes in the ledger left stale", async () => {
    // Prepare: the row stored 'unknown' itself (as contacts did before the ledger); the number replied STOP since
    const org = await legacyOrganization();
    const put = (Item: Record<string, unknown>) => dynamo.send(new PutCommand({ TableName: TABLE_NAME, Item }));
    const contactId = uuidv7();
    const number = '+14155551004';
    await put({ ...numberClaimKey(org.tenantId, number), type: 'numberClaim', contactId, named: true });
    await put({
      ...contactKey(org.tenantId, contactId), type: 'contact', id: contactId, tenantId: org.tenantId, displayName: 'Older Contact', phoneNumber: number,
      normalizedNumber: number, company: null, tag: null, notes: null, createdByAgentId: null, isAutoCreated: false, source: 'manual',
      consentStatus: 'unknown', consentSource: null, consentAt: null, consentNote: null, createdAt: '2026-09-01T00:00:00.000Z', updatedAt: '2026-09-01T00:00:00.000Z',
    });
    await put({ ...consentKey(org.tenantId, number), type: 'consent', number, consentStatus: 'opted_out', consentSource: 'sms_keyword', consentAt: '2026-10-03T00:00:00.000Z', consentNote: 'Replied STOP' });
    // Act
    await migrate();
    const again = await migrate();
    // Assess
    expect(await getContact(org.tenantId, contactId)).toMatchObject({ consentStatus: 'opted_out', consentAt: '2026-10-03T00:00:00.000Z' });
    expect(again.moved.contacts).toBe(0);
  });

  it('gives a contact created after the migration the copy at once: no contact is left for it', async () => {
    // Prepare
    const org = await legacyOrganization();
    await migrate();
    // Act
    const { contact } = await createContact(org.tenantId, { displayName: 'New', phoneNumber: '+14155551003' });
    const result = await migrate();
    // Assess
    expect(contact.consentStatus).toBe('unknown');
    expect(result.moved.contacts).toBe(0);
  });
});
