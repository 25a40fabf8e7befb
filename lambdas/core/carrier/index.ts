import { intEnv, optionalEnv, requireEnv } from '../config';
import { LoopbackCarrier } from './loopback';
import { TwilioCarrier } from './twilio';
import type { Carrier } from './types';

export { CarrierError, type Carrier, type CarrierReceipt, type OutboundText } from './types';
export { LoopbackCarrier, stopLoopbackCarriers } from './loopback';
export { TwilioCarrier, deliveryStatusOfTwilio } from './twilio';

/**
 * The carrier named by `CARRIER`, built once at init. Anything else, or a missing credential,
 * throws while the module loads, so a misconfigured function fails loudly instead of at the first
 * send.
 *   CARRIER=twilio   TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN, optional TWILIO_BASE_URL, TWILIO_STATUS_CALLBACK_URL
 *   CARRIER=loopback optional LOOPBACK_STATUS_DELAY_MS (default 1000), LOOPBACK_FAIL_TO (comma-separated numbers)
 */
export function createCarrier(): Carrier {
  const kind = optionalEnv('CARRIER');
  switch (kind) {
    case 'twilio':
      return new TwilioCarrier({
        accountSid: requireEnv('TWILIO_ACCOUNT_SID'),
        authToken: requireEnv('TWILIO_AUTH_TOKEN'),
        baseUrl: optionalEnv('TWILIO_BASE_URL'),
        statusCallbackUrl: optionalEnv('TWILIO_STATUS_CALLBACK_URL'),
      });
    case 'loopback':
      return new LoopbackCarrier({
        statusDelayMs: intEnv('LOOPBACK_STATUS_DELAY_MS', 1000),
        failTo: (optionalEnv('LOOPBACK_FAIL_TO') ?? '').split(',').map((n) => n.trim()).filter(Boolean),
      });
    default:
      throw new Error(`Environment variable CARRIER must be "twilio" or "loopback" (got ${kind === undefined ? 'nothing' : `"${kind}"`})`);
  }
}
