import { createTestTable } from '../support/table';
import { lambdaContext } from '../support/api-event';
import { callbackHandler } from '../../lambdas/handlers/carrier/callback-handler';
import { carrierRoutes, type CarrierRouteSpec } from '../../lambdas/handlers/carrier/routes';
import { findCallByProviderSid } from '../../lambdas/contexts/calls/calls';
import {
  recordingCallback,
  transcriptionCallback,
  voiceStatusCallback,
  type CallbackKind,
} from '../../lambdas/contexts/carrier/callbacks';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamo, TABLE_NAME } from '../../lambdas/shared/aws';
import { getVoicemail, voicemailKey } from '../../lambdas/contexts/calls/voicemails';
import { EVENT_SCHEMAS } from '../../lambdas/contexts/webhooks/event-schemas';
import { deriveEvent } from '../../lambdas/contexts/webhooks/events';
import { createTenant } from '../../lambdas/contexts/tenants/tenants';
import { pstnInboundLeg, recordingStatus, sid, transcription, type Form } from '../fixtures/twilio/callbacks';
import { signedCallbackEvent, TEST_PUBLIC_BASE_URL, TEST_TOKEN } from '../fixtures/twilio/events';

const ORG = '+14155550000';
const T0 = Date.parse('2026-11-21T10:00:00.000Z');
const at = (s: number) => new Date(T0 + s * 1000);

let tenantId: string;
let n = 500;
let callers = 0;
const next = () => (n += 1);
const nextCaller = () => `+1415555${String((callers += 1)).padStart(4, '0')}`;

function poster<P>(route: CarrierRouteSpec, kind: CallbackKind<P>) {
  const handler = callbackHandler(route, kind, {
    config: { authToken: TEST_TOKEN, publicBaseUrl: TEST_PUBLIC_BASE_URL },
    now: () => at(120),
  });
  return async (form: Form, query: Record<string, string> = {}) => {
    const result = await handler(signedCallbackEvent(route, form, query), lambdaContext);
    expect(result.statusCode).toBe(200);
    return result;
  };
}
const postStatus = poster(carrierRoutes.twilioVoiceStatus, voiceStatusCallback);
const postRecording = poster(carrierRoutes.twilioVoiceRecording, recordingCallback);
const postTranscription = poster(carrierRoutes.twilioVoiceTranscription, transcriptionCallback);

/** An inbound call that nobody answered and that went to voicemail, as its status callbacks tell it. */
async function missedCall(callSid: string, caller: string) {
  await postStatus(pstnInboundLeg({ callSid, status: 'ringing', at: at(0), sequence: 0, from: caller, to: ORG }));
  await postStatus(
    pstnInboundLeg({ callSid, status: 'completed', at: at(45), sequence: 1, duration: 45, from: caller, to: ORG }),
  );
}

const recording = (callSid: string, recordingSid: string, status: 'completed' | 'absent' = 'completed') =>
  recordingStatus({ callSid, recordingSid, status, duration: 17, startedAt: at(25) });
const transcript = (callSid: string, recordingSid: string, caller: string, text: string) =>
  transcription({
    callSid,
    recordingSid,
    transcriptionSid: sid('TR', next()),
    from: caller,
    to: ORG,
    status: 'completed',
    text,
  });

const rawRow = async (callSid: string) =>
  (await dynamo.send(new GetCommand({ TableName: TABLE_NAME, Key: voicemailKey(tenantId, callSid) }))).Item;

/** What the webhook router derives from a change of the row (its stream record). */
const eventOf = (oldImage: Record<string, unknown> | undefined, newImage: Record<string, unknown> | undefined) =>
  deriveEvent({
    eventId: 'stream-1',
    eventName: oldImage ? 'MODIFY' : 'INSERT',
    approximateCreationMs: T0,
    oldImage,
    newImage,
  });

beforeAll(async () => {
  await createTestTable();
  tenantId = (await createTenant({ name: 'Voicemail Org', numbers: [ORG] })).id;
});

describe('a voicemail', () => {
  it('is ready with its transcript when the transcript arrived first', async () => {
    // Prepare
    const callSid = sid('CA', next());
    const recordingSid = sid('RE', next());
    const caller = nextCaller();
    await missedCall(callSid, caller);
    // Act
    await postTranscription(transcript(callSid, recordingSid, caller, 'Hi, call me back about the invoice.'));
    const beforeRecording = await getVoicemail(tenantId, callSid);
    const rowBefore = await rawRow(callSid);
    await postRecording(recording(callSid, recordingSid));
    // Assess
    const call = await findCallByProviderSid(tenantId, callSid);
    const event = eventOf(rowBefore, await rawRow(callSid));
    expect(event?.type).toBe('voicemail.received');
    expect(EVENT_SCHEMAS['voicemail.received'].safeParse(JSON.parse(event!.body)).success).toBe(true);
    expect(JSON.parse(event!.body).data.voicemail).toMatchObject({
      callId: call!.id,
      fromNumber: caller,
      transcript: 'Hi, call me back about the invoice.',
    });
    expect(beforeRecording).toMatchObject({ recordingReady: false, transcript: 'Hi, call me back about the invoice.' });
    expect(await getVoicemail(tenantId, callSid)).toEqual({
      id: beforeRecording!.id,
      tenantId,
      callId: call!.id,
      fromNumber: caller,
      toNumber: ORG,
      recordingReady: true,
      transcript: 'Hi, call me back about the invoice.',
      createdAt: at(120).toISOString(),
      durationSec: 17,
    });
  });

  it('is ready without a transcript when the recording comes first; the transcript is stored afterwards', async () => {
    // Prepare
    const callSid = sid('CA', next());
    const recordingSid = sid('RE', next());
    const caller = nextCaller();
    await missedCall(callSid, caller);
    // Act
    await postRecording(recording(callSid, recordingSid));
    const ready = await getVoicemail(tenantId, callSid);
    const readyRow = await rawRow(callSid);
    await postTranscription(transcript(callSid, recordingSid, caller, 'It is about Tuesday.'));
    // Assess: stored on the row, and no second voicemail.received from that change
    expect(eventOf(readyRow, await rawRow(callSid))).toBeUndefined();
    expect(ready).toMatchObject({
      recordingReady: true,
      transcript: null,
      fromNumber: caller,
      toNumber: ORG,
      createdAt: at(25).toISOString(),
      durationSec: 17,
    });
    expect(await getVoicemail(tenantId, callSid)).toEqual({ ...ready, transcript: 'It is about Tuesday.' });
  });

  it('is one row however often Twilio repeats the recording callback', async () => {
    // Prepare
    const callSid = sid('CA', next());
    const recordingSid = sid('RE', next());
    await missedCall(callSid, nextCaller());
    await postRecording(recording(callSid, recordingSid));
    const first = await getVoicemail(tenantId, callSid);
    // Act
    await postRecording(recording(callSid, recordingSid));
    // Assess
    expect(await getVoicemail(tenantId, callSid)).toEqual(first);
  });

  it('waits for its numbers when recorded before its call was known, and is ready once the call arrives', async () => {
    // Prepare: the recording callback names only the call; the organization comes from the signed URL.
    const callSid = sid('CA', next());
    const caller = nextCaller();
    // Act
    await postRecording(recording(callSid, sid('RE', next())), { tenantId });
    const waiting = await getVoicemail(tenantId, callSid);
    await missedCall(callSid, caller);
    // Assess
    expect(waiting).toMatchObject({ recordingReady: false, fromNumber: null, callId: null });
    const call = await findCallByProviderSid(tenantId, callSid);
    expect(await getVoicemail(tenantId, callSid)).toMatchObject({
      recordingReady: true,
      fromNumber: caller,
      toNumber: ORG,
      callId: call!.id,
    });
  });

  it('is not created for a recording Twilio reports absent (silence), nor for a call of no organization', async () => {
    // Prepare
    const silent = sid('CA', next());
    const unknown = sid('CA', next());
    await missedCall(silent, nextCaller());
    // Act
    await postRecording(recording(silent, sid('RE', next()), 'absent'));
    await postRecording(recording(unknown, sid('RE', next())));
    // Assess
    expect(await getVoicemail(tenantId, silent)).toBeUndefined();
    expect(await getVoicemail(tenantId, unknown)).toBeUndefined();
  });

  it('answers the recording callback with empty TwiML, as a <Record action> expects', async () => {
    // Prepare
    const callSid = sid('CA', next());
    await missedCall(callSid, nextCaller());
    // Act
    const result = await postRecording(recording(callSid, sid('RE', next())));
    // Assess
    expect(result).toMatchObject({
      headers: { 'Content-Type': 'text/xml' },
      body: '<?xml version="1.0" encoding="UTF-8"?><Response/>',
    });
  });
});
