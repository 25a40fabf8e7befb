import { transcriptionCallback } from '../../contexts/carrier/callbacks';
import { callbackHandler } from './callback-handler';
import { carrierRoutes } from './routes';

export const handler = callbackHandler(carrierRoutes.twilioVoiceTranscription, transcriptionCallback);
