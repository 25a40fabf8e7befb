import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestTable } from '../support/table';
import { lambdaContext } from '../support/api-event';
import { callbackHandler } from '../../lambdas/handlers/carrier/callback-handler';
import { carrierRoutes } from '../../lambdas/handlers/carrier/routes';
import {
  recordingCallback,
  smsInboundCallback,
  smsStatusCallback,
  transcriptionCallback,
  voiceStatusCallback,
} from '../../lambdas/contexts/carrier/callbacks';
import { getContact } from '../../lambdas/contexts/contacts/contacts';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import { toProxyEvent } from '../../local/proxy-event';
import {
  postSignedCallback,
  simulateCallViaCallbacks,
  simulateSms,
  simulateVoicemail,
  type TargetInput,
} from '../../local/admin/carrier-commands';

/**
 * The operator CLI's simulations against a stand-in for the local runtime: a plain HTTP server
 * that hands each request, as API Gateway would, to the callback handlers of the route manifest.
 */
const ORG = '+14155550000';
const AGENT = '0199a000-0000-7000-8000-0000000000a1';
const TOKEN = 'cli-test-token';
let server: Server;
let target: TargetInput;
let tenantId: string;

type Handler = ReturnType<typeof callbackHandler>;
type Config = { authToken: string; publicBaseUrl: string };
/**
 * One handler per route, built like the Lambda modules (lambdas/handlers/carrier/*.ts) but with the test's
 * configuration.
 */
const handlerFactories: Record<string, (config: Config) => Handler> = {
  [carrierRoutes.twilioVoiceStatus.path]: (config) =>
    callbackHandler(carrierRoutes.twilioVoiceStatus, voiceStatusCallback, { config }),
  [carrierRoutes.twilioVoiceRecording.path]: (config) =>
    callbackHandler(carrierRoutes.twilioVoiceRecording, recordingCallback, { config }),
  [carrierRoutes.twilioVoiceTranscription.path]: (config) =>
    callbackHandler(carrierRoutes.twilioVoiceTranscription, transcriptionCallback, { config }),
  [carrierRoutes.twilioSmsInbound.path]: (config) =>
    callbackHandler(carrierRoutes.twilioSmsInbound, smsInboundCallback, { config }),
  [carrierRoutes.twilioSmsStatus.path]: (config) =>
    callbackHandler(carrierRoutes.twilioSmsStatus, smsStatusCallback, { config }),
};

const readBody = (req: IncomingMessage) =>
  new Promise<string>((resolve) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
  });

beforeAll(async () => {
  await createTestTable();
  tenantId = (await createTenant({ name: 'CLI Org', numbers: [ORG] })).id;
  server = createServer((req, res) => {
    void (async () => {
      const [rawPath, rawQuery = ''] = (req.url ?? '/').split('?');
      const factory = handlerFactories[rawPath];
      if (!factory) {
        res.writeHead(404).end();
        return;
      }
      const { port } = server.address() as AddressInfo;
      const handler = factory({ authToken: TOKEN, publicBaseUrl: `http://127.0.0.1:${port}` });
      const request = {
        method: req.method ?? 'POST',
        rawPath,
        rawQuery,
        rawHeaders: req.rawHeaders,
        body: await readBody(req),
        sourceIp: '127.0.0.1',
      };
      const event = toProxyEvent({
        request,
        resource: rawPath,
        pathParameters: null,
        authorizer: null,
        requestId: 'r',
        stage: 'local',
        now: new Date(),
      });
      const result = await handler(event, lambdaContext);
      res.writeHead(result.statusCode, result.headers as Record<string, string>).end(result.body);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  target = { callbackUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, authToken: TOKEN };
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('simulate commands', () => {
  it('simulate sms posts a signed inbound text and prints the stored message', async () => {
    // Act
    const { message } = await simulateSms({ tenantId, from: '+14155550111', body: 'Hello from the CLI', target });
    // Assess
    expect(message).toMatchObject({
      direction: 'inbound',
      fromNumber: '+14155550111',
      toNumber: ORG,
      body: 'Hello from the CLI',
      status: 'received',
    });
  });

  it('simulate call plays an answered inbound call and a softphone call through the status callbacks', async () => {
    // Act
    const inbound = await simulateCallViaCallbacks({
      tenantId,
      direction: 'inbound',
      from: '+14155550112',
      status: 'completed',
      agentId: AGENT,
      durationSec: 30,
      startedAt: new Date('2026-11-21T10:00:00Z'),
      target,
    });
    const missed = await simulateCallViaCallbacks({
      tenantId,
      direction: 'inbound',
      from: '+14155550113',
      status: 'no-answer',
      durationSec: 20,
      startedAt: new Date('2026-11-21T10:05:00Z'),
      target,
    });
    const outbound = await simulateCallViaCallbacks({
      tenantId,
      direction: 'outbound',
      to: '+14155550114',
      agentId: AGENT,
      status: 'busy',
      durationSec: 0,
      startedAt: new Date('2026-11-21T10:10:00Z'),
      target,
    });
    // Assess
    expect(inbound.call).toMatchObject({
      direction: 'inbound',
      fromNumber: '+14155550112',
      toNumber: ORG,
      status: 'completed',
      agentId: AGENT,
      durationSec: 36,
      answeredAt: '2026-11-21T10:00:05.000Z',
    });
    expect(missed.call).toMatchObject({ direction: 'inbound', status: 'no-answer', answeredAt: null, agentId: null });
    expect(outbound.call).toMatchObject({
      direction: 'outbound',
      fromNumber: ORG,
      toNumber: '+14155550114',
      status: 'busy',
      agentId: AGENT,
    });
    expect(await getContact(tenantId, outbound.call.contactId!)).toMatchObject({ source: 'auto_outbound' });
  });

  it('simulate voicemail prints a ready voicemail carrying its transcript', async () => {
    // Act
    const { voicemail } = await simulateVoicemail({
      tenantId,
      from: '+14155550115',
      transcript: 'Please call me back',
      target,
    });
    // Assess
    expect(voicemail).toMatchObject({
      fromNumber: '+14155550115',
      toNumber: ORG,
      recordingReady: true,
      transcript: 'Please call me back',
      durationSec: 14,
      callId: expect.any(String),
    });
  });

  it('a callback signed with another token is refused by the runtime, and the command says what to pass', async () => {
    // Act
    const refused = await postSignedCallback(
      target.callbackUrl!,
      carrierRoutes.twilioSmsInbound.path,
      { MessageSid: 'SM1', From: '+14155550116', To: ORG, Body: 'x' },
      'wrong',
      target.callbackUrl!,
    );
    const command = simulateSms({
      tenantId,
      from: '+14155550116',
      body: 'x',
      target: { ...target, authToken: 'wrong' },
    });
    // Assess
    expect(refused.status).toBe(403);
    await expect(command).rejects.toThrow('--twilio-auth-token');
  });
});
