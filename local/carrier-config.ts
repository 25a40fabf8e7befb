import { LOCAL_TWILIO_AUTH_TOKEN } from '../lambdas/contexts/carrier/callback-config';
import { carrierRoutes } from '../lambdas/handlers/carrier/routes';
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

/**
 * The send function's side, for `CARRIER=twilio` (texts through a real Twilio account, with
 * TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN): each text asks Twilio for status callbacks at the
 * URL the stack gives it in AWS, `<public URL>/carrier/twilio/sms/status` (with the message id and
 * the connection overrides the carrier adds), so its status moves and its charge settles as in
 * AWS instead of the sweep failing and refunding it after the grace period. Twilio must reach that
 * URL, so it comes from --public-url; without one the runtime refuses to start rather than send
 * texts whose outcome would never arrive. An explicit TWILIO_STATUS_CALLBACK_URL is kept. With the
 * loopback carrier nothing changes.
 */
export function applyCarrierSenderEnv(
  options: Pick<RuntimeOptions, 'publicUrl'>,
  env: NodeJS.ProcessEnv = process.env,
): void {
  if (env.CARRIER !== 'twilio' || env.TWILIO_STATUS_CALLBACK_URL) return;
  if (!options.publicUrl) {
    throw new Error(
      'CARRIER=twilio sends real texts, whose status Twilio posts back: give --public-url <the https URL at which ' +
        'Twilio reaches this runtime, e.g. a tunnel> (or set TWILIO_STATUS_CALLBACK_URL)',
    );
  }
  env.TWILIO_STATUS_CALLBACK_URL = `${options.publicUrl}${carrierRoutes.twilioSmsStatus.path}`;
}
