import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { API_PREFIX } from '../../lambdas/handlers/http/route-spec';
import { CARRIER_ROUTES } from '../../lambdas/handlers/carrier/routes';

const root = join(__dirname, '..', '..');

describe('the carrier route manifest', () => {
  it('lists the five Twilio callbacks as POSTs outside the versioned API, once each', () => {
    // Act
    const paths = CARRIER_ROUTES.map((r) => r.path);
    // Assess
    expect(paths.sort()).toEqual([
      '/carrier/twilio/sms/inbound',
      '/carrier/twilio/sms/status',
      '/carrier/twilio/voice/recording',
      '/carrier/twilio/voice/status',
      '/carrier/twilio/voice/transcription',
    ]);
    expect(CARRIER_ROUTES.every((r) => r.method === 'POST' && !r.path.startsWith(API_PREFIX))).toBe(true);
    expect(new Set(CARRIER_ROUTES.map((r) => r.operationId)).size).toBe(CARRIER_ROUTES.length);
    expect(
      CARRIER_ROUTES.filter((r) => r.twiml)
        .map((r) => r.operationId)
        .sort(),
    ).toEqual(['twilioSmsInbound', 'twilioVoiceRecording']);
  });

  it('names handler modules that exist', () => {
    expect(CARRIER_ROUTES.filter((r) => !existsSync(join(root, r.handler)))).toEqual([]);
  });
});

describe('a callback function at init', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('fails loudly without its auth token or public URL, and loads with them', async () => {
    // Prepare
    const load = async () => {
      let loaded: { handler?: unknown } = {};
      await jest.isolateModulesAsync(async () => {
        loaded = await import('../../lambdas/handlers/carrier/sms-inbound');
      });
      return loaded;
    };
    delete process.env.TWILIO_AUTH_TOKEN;
    process.env.PUBLIC_BASE_URL = 'https://api.example.com/prod';
    // Act + Assess
    await expect(load()).rejects.toThrow('Missing required environment variable TWILIO_AUTH_TOKEN');
    process.env.TWILIO_AUTH_TOKEN = 'token';
    process.env.PUBLIC_BASE_URL = 'api.example.com';
    await expect(load()).rejects.toThrow('PUBLIC_BASE_URL must be an absolute URL');
    process.env.PUBLIC_BASE_URL = 'https://api.example.com/prod/';
    expect(typeof (await load()).handler).toBe('function');
  });
});
