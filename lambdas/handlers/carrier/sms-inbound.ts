import { smsInboundCallback } from '../../contexts/carrier/callbacks';
import { callbackHandler } from './callback-handler';
import { carrierRoutes } from './routes';

export const handler = callbackHandler(carrierRoutes.twilioSmsInbound, smsInboundCallback);
