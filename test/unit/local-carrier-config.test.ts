import { LOCAL_TWILIO_AUTH_TOKEN } from '../../lambdas/contexts/carrier/callback-config';
import { applyCarrierCallbackEnv, carrierCallbackSettings } from '../../local/carrier-config';

describe('the carrier callback settings of the local runtime', () => {
  const none = { twilioAuthToken: undefined, publicUrl: undefined };

  it('defaults to the documented local token and the runtime own address', () => {
    expect(carrierCallbackSettings(none, 4321, {})).toEqual({ publicBaseUrl: 'http://127.0.0.1:4321', authToken: LOCAL_TWILIO_AUTH_TOKEN, tokenSource: 'default' });
  });

  it('takes the token from --twilio-auth-token before TWILIO_AUTH_TOKEN, and calls either custom', () => {
    const env = { TWILIO_AUTH_TOKEN: 'from-env' };

    expect(carrierCallbackSettings(none, 1, env)).toMatchObject({ authToken: 'from-env', tokenSource: 'custom' });
    expect(carrierCallbackSettings({ ...none, twilioAuthToken: 'from-flag' }, 1, env)).toMatchObject({ authToken: 'from-flag', tokenSource: 'custom' });
  });

  it('signs over --public-url when given', () => {
    expect(carrierCallbackSettings({ ...none, publicUrl: 'https://abc.tunnel.example' }, 1, {}).publicBaseUrl).toBe('https://abc.tunnel.example');
  });

  it('hands both to the callback functions through the variables they read at load', () => {
    const env: NodeJS.ProcessEnv = { PUBLIC_BASE_URL: 'https://inherited.example' };

    applyCarrierCallbackEnv(carrierCallbackSettings(none, 4321, env), env);

    expect(env).toEqual({ PUBLIC_BASE_URL: 'http://127.0.0.1:4321', TWILIO_AUTH_TOKEN: LOCAL_TWILIO_AUTH_TOKEN });
  });
});
