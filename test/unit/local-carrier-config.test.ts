import { LOCAL_TWILIO_AUTH_TOKEN } from '../../lambdas/contexts/carrier/callback-config';
import { applyCarrierCallbackEnv, applyCarrierSenderEnv, carrierCallbackSettings } from '../../local/carrier-config';

describe('the carrier callback settings of the local runtime', () => {
  const none = { twilioAuthToken: undefined, publicUrl: undefined };

  it('defaults to the documented local token and the runtime own address', () => {
    expect(carrierCallbackSettings(none, 4321, {})).toEqual({
      publicBaseUrl: 'http://127.0.0.1:4321',
      authToken: LOCAL_TWILIO_AUTH_TOKEN,
      tokenSource: 'default',
    });
  });

  it('takes the token from --twilio-auth-token before TWILIO_AUTH_TOKEN, and calls either custom', () => {
    const env = { TWILIO_AUTH_TOKEN: 'from-env' };

    expect(carrierCallbackSettings(none, 1, env)).toMatchObject({ authToken: 'from-env', tokenSource: 'custom' });
    expect(carrierCallbackSettings({ ...none, twilioAuthToken: 'from-flag' }, 1, env)).toMatchObject({
      authToken: 'from-flag',
      tokenSource: 'custom',
    });
  });

  it('signs over --public-url when given', () => {
    expect(carrierCallbackSettings({ ...none, publicUrl: 'https://abc.tunnel.example' }, 1, {}).publicBaseUrl).toBe(
      'https://abc.tunnel.example',
    );
  });

  it('hands both to the callback functions through the variables they read at load', () => {
    const env: NodeJS.ProcessEnv = { PUBLIC_BASE_URL: 'https://inherited.example' };

    applyCarrierCallbackEnv(carrierCallbackSettings(none, 4321, env), env);

    expect(env).toEqual({ PUBLIC_BASE_URL: 'http://127.0.0.1:4321', TWILIO_AUTH_TOKEN: LOCAL_TWILIO_AUTH_TOKEN });
  });
});

describe('the send function of the local runtime with CARRIER=twilio', () => {
  it('asks Twilio for status callbacks at <--public-url>/carrier/twilio/sms/status, the URL the stack gives each text', () => {
    const env: NodeJS.ProcessEnv = { CARRIER: 'twilio' };

    applyCarrierSenderEnv({ publicUrl: 'https://abc.tunnel.example' }, env);

    expect(env.TWILIO_STATUS_CALLBACK_URL).toBe('https://abc.tunnel.example/carrier/twilio/sms/status');
  });

  it('refuses to start without --public-url, since Twilio could never post the texts’ outcomes', () => {
    expect(() => applyCarrierSenderEnv({ publicUrl: undefined }, { CARRIER: 'twilio' })).toThrow(/--public-url/);
  });

  it('keeps a TWILIO_STATUS_CALLBACK_URL given explicitly, and changes nothing for the loopback carrier', () => {
    const explicit: NodeJS.ProcessEnv = {
      CARRIER: 'twilio',
      TWILIO_STATUS_CALLBACK_URL: 'https://hooks.example/status',
    };
    const loopback: NodeJS.ProcessEnv = { CARRIER: 'loopback' };

    applyCarrierSenderEnv({ publicUrl: 'https://abc.tunnel.example' }, explicit);
    applyCarrierSenderEnv({ publicUrl: undefined }, loopback);

    expect(explicit.TWILIO_STATUS_CALLBACK_URL).toBe('https://hooks.example/status');
    expect(loopback).toEqual({ CARRIER: 'loopback' });
  });
});
