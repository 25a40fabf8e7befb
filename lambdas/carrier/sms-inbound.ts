import { smsInboundCallback } from '../core/carrier-callbacks/callbacks';
import { callbackHandler } from './callback-handler';
import { carrierRoutes } from './routes';

export const handler = callbackHandler(carrierRoutes.twilioSmsInbound, smsInboundCallback);
