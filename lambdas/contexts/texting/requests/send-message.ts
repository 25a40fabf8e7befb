import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { e164 } from '../../../shared/schemas/phone-number';

/** Text message body limit (spec section 8), in UTF-16 code units as JSON strings count them. */
export const MAX_BODY_LENGTH = 1600;

export const SendMessageBody = z
  .strictObject({
    to: e164,
    body: z.string().check(z.minLength(1), z.maxLength(MAX_BODY_LENGTH)),
  })
  .register(z.globalRegistry, { id: 'SendMessageRequest' });
