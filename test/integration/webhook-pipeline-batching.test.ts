import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestTable } from '../support/table';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { uuidv7 } from '../../lambdas/shared/ids';
import { batchPutItems } from '../../lambdas/shared/table/batch-write';
import { tenantPk } from '../../lambdas/shared/table/keys';
import { createTenant, updateTenant } from '../../lambdas/contexts/tenants/tenants';
import { toItem as messageItem } from '../../lambdas/contexts/texting/messages';
import type { Message } from '../../lambdas/contexts/texting/schemas';
import { addWebhookEndpoint } from '../../lambdas/contexts/webhooks/endpoints';
import { verifyDelivery } from '../../clients/typescript/src/webhooks';
import { startWebhookPipeline, type WebhookPipeline } from '../../local/webhook-pipeline';

/**
 * The local pipeline routes the stream a batch at a time, as the router Lambda does: one read of
 * an organization's endpoints per batch, however many of its events the batch holds, and every
 * event delivered once. (It used to route record by record, each with a fresh read of the
 * endpoints, and fell behind under load.)
 */
/** Enough that a read per record would be ten times the batches' reads; the pipeline's throughput is the bench's (section 10). */
const EVENTS = 100;

let server: http.Server;
let url: string;
let secret = '';
const receipts = new Map<string, number>();
let badSignatures = 0;
let pipeline: WebhookPipeline;
let tenantId: string;
let endpointReads = 0;

const inboundText = (i: number): Message => {
  const now = new Date();
  const from = `+1303555${String(i).padStart(4, '0')}`;
  return {
    id: uuidv7(now),
    tenantId,
    direction: 'inbound',
    fromNumber: from,
    toNumber: '+15005550999',
    counterpartNumber: from,
    body: `Batch ${i}`,
    status: 'received',
    messageSid: `SMbatch${i}`,
    agentId: null,
    isRead: false,
    createdAt: now.toISOString(),
  };
};

beforeAll(async () => {
  await createTestTable();
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      if (!verifyDelivery(req.headers, raw, secret).ok) badSignatures += 1;
      const messageId = (JSON.parse(raw.toString('utf8')) as { data: { message: { id: string } } }).data.message.id;
      receipts.set(messageId, (receipts.get(messageId) ?? 0) + 1);
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  tenantId = (await createTenant({ name: 'Batching Org' })).id;
  await updateTenant(tenantId, { approveHosts: ['127.0.0.1'] });
  secret = (await addWebhookEndpoint(tenantId, { url, events: ['sms.received'] }, { allowInsecureTargets: true }))
    .secret;
  // Counts the router's reads of the organization's endpoints: a Query of the organization's partition.
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { ExpressionAttributeValues?: Record<string, unknown> };
      if (context.commandName === 'QueryCommand' && input.ExpressionAttributeValues?.[':pk'] === tenantPk(tenantId))
        endpointReads += 1;
      return next(args);
    },
    { step: 'initialize', name: 'endpointReads' },
  );
  // A poll every 2 s: the texts below, written at once, reach the router in one or two batches.
  pipeline = await startWebhookPipeline({
    endpoint: process.env.DYNAMODB_ENDPOINT!,
    tableName: TABLE_NAME,
    allowInsecureTargets: true,
    pollIntervalMs: 2_000,
  });
}, 60_000);

afterAll(async () => {
  dynamo.middlewareStack.remove('endpointReads');
  await pipeline?.stop();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}, 30_000);

it(`routes ${EVENTS} events of one organization with one read of its endpoints per batch, and delivers each once`, async () => {
  // Prepare
  const texts = Array.from({ length: EVENTS }, (_, i) => inboundText(i));

  // Act
  await batchPutItems(
    dynamo,
    TABLE_NAME,
    texts.map((text) => messageItem(text)),
    8,
  );
  // Until every text arrived and the queue holds nothing more: a duplicate would be a message still kept there.
  const deadline = Date.now() + 90_000;
  const settled = () =>
    texts.every((text) => receipts.has(text.id)) && pipeline.routerStats().events >= EVENTS && pipeline.queued() === 0;
  while (!settled() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));

  // Assess
  const stats = pipeline.routerStats();
  expect(texts.filter((text) => receipts.get(text.id) !== 1)).toEqual([]);
  expect(badSignatures).toBe(0);
  expect(stats.events).toBe(EVENTS);
  expect(endpointReads).toBeGreaterThan(0);
  expect(endpointReads).toBeLessThanOrEqual(stats.batches);
  expect(endpointReads).toBeLessThan(EVENTS / 10);
}, 120_000);
