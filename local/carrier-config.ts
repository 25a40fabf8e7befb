import { LOCAL_TWILIO_AUTH_TOKEN } from '../lambdas/contexts/carrier/callback-config';
import type { RuntimeOptions } from './cli-args';

/**
 * What the carrier callback functions check signatures with, in the local runtime. They read
 * TWILIO_AUTH_TOKEN and PUBLIC_BASE_URL once, when their modules load (as in AWS, where the
 * stack sets them), so `applyCarrierCallbackEnv` runs before they are imported.
 */
export type CarrierCallbackSettings = {
  /** The root the carrier calls; a callback's signature covers this + its path. */
  publicBaseUrl: string;
  authToken: string;
  /** `default`: the documented local token, which the CLI's `simulate` commands use unasked. */
  tokenSource: 'default' | 'custom';
};

/**
 * The token: `--twilio-auth-token`, else TWILIO_AUTH_TOKEN (the same account's token a
 * CARRIER=twilio run already has), else the local default. The public URL: `--public-url`, else
 * this runtime's own address; an inherited PUBLIC_BASE_URL is ignored, so what runtime.json
 * records is what is checked.
 */
export function carrierCallbackSettings(
  options: Pick<RuntimeOptions, 'twilioAuthToken' | 'publicUrl'>,
  port: number,
  env: NodeJS.ProcessEnv = process.env,
): CarrierCallbackSettings {
  const fromEnv = env.TWILIO_AUTH_TOKEN === '' ? undefined : env.TWILIO_AUTH_TOKEN;
  const authToken = options.twilioAuthToken ?? fromEnv ?? LOCAL_TWILIO_AUTH_TOKEN;
  return {
    publicBaseUrl: options.publicUrl ?? `http://127.0.0.1:${port}`,
    authToken,
    tokenSource: authToken === LOCAL_TWILIO_AUTH_TOKEN ? 'default' : 'custom',
  };
}

export function applyCarrierCallbackEnv(settings: CarrierCallbackSettings, env: NodeJS.ProcessEnv = process.env): void {
  env.TWILIO_AUTH_TOKEN = settings.authToken;
  env.PUBLIC_BASE_URL = settings.publicBaseUrl;
}
