/**
 * The carrier's callback routes: Twilio's form-encoded POSTs, at the API root and outside
 * `/api/v1` (they are not JSON API operations: no API key, no rate-limit headers, no OpenAPI
 * entry). Like lambdas/handlers/api/routes.ts, the one list: the CDK construct makes one function and one
 * POST method per entry, and the local runtime serves them at the same paths.
 * Authentication is the request signature, checked by lambdas/handlers/carrier/callback-handler.ts.
 */
export type CarrierRouteSpec = {
  operationId: string;
  method: 'POST';
  /** From the API root (not under /api/v1); the signature covers PUBLIC_BASE_URL + this path. */
  path: string;
  /** The handler module, relative to the repository root; it exports `handler`. */
  handler: string;
  /** Twilio reads the answer as TwiML (the messaging webhook, `<Record action>`): `<Response/>`. */
  twiml: boolean;
  summary: string;
};

export const CARRIER_PREFIX = '/carrier/twilio';

const route = <T extends CarrierRouteSpec>(spec: T): T => spec;

export const carrierRoutes = {
  twilioVoiceStatus: route({
    operationId: 'twilioVoiceStatus',
    method: 'POST',
    path: `${CARRIER_PREFIX}/voice/status`,
    handler: 'lambdas/handlers/carrier/voice-status.ts',
    twiml: false,
    summary: 'Call status of each leg (StatusCallback): calls, their answer, agent and outcome',
  }),
  twilioVoiceRecording: route({
    operationId: 'twilioVoiceRecording',
    method: 'POST',
    path: `${CARRIER_PREFIX}/voice/recording`,
    handler: 'lambdas/handlers/carrier/voice-recording.ts',
    twiml: true,
    summary: "The voicemail <Record>'s recordingStatusCallback (or action): the recording is ready",
  }),
  twilioVoiceTranscription: route({
    operationId: 'twilioVoiceTranscription',
    method: 'POST',
    path: `${CARRIER_PREFIX}/voice/transcription`,
    handler: 'lambdas/handlers/carrier/voice-transcription.ts',
    twiml: false,
    summary: "The voicemail <Record>'s transcribeCallback: the transcript",
  }),
  twilioSmsInbound: route({
    operationId: 'twilioSmsInbound',
    method: 'POST',
    path: `${CARRIER_PREFIX}/sms/inbound`,
    handler: 'lambdas/handlers/carrier/sms-inbound.ts',
    twiml: true,
    summary: "A text arrived on one of the organization's numbers (the number's messaging webhook)",
  }),
  twilioSmsStatus: route({
    operationId: 'twilioSmsStatus',
    method: 'POST',
    path: `${CARRIER_PREFIX}/sms/status`,
    handler: 'lambdas/handlers/carrier/sms-status.ts',
    twiml: false,
    summary: 'Delivery status of a text the service sent (StatusCallback of the message)',
  }),
} satisfies Record<string, CarrierRouteSpec>;

export type CarrierRouteId = keyof typeof carrierRoutes;

export const CARRIER_ROUTES: CarrierRouteSpec[] = Object.values(carrierRoutes);
