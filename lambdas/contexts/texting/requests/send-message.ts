import * as z from 'zod/mini';
import '../../../shared/schemas/zod-english';
import { e164 } from '../../../shared/schemas/phone-number';
import { MESSAGE_CATEGORIES } from '../message-categories';

/** Text message body limit (spec section 8), in UTF-16 code units as JSON strings count them. */
export const MAX_BODY_LENGTH = 1600;

export const SendMessageBody = z
  .strictObject({
    to: e164,
    body: z.string().check(z.minLength(1), z.maxLength(MAX_BODY_LENGTH)),
    sendAt: z.optional(
      z.iso.datetime({ offset: true }).register(z.globalRegistry, {
        description:
          'Send later: a date-time with its offset, at least 60 seconds and at most 90 days ahead. The text is ' +
          'charged now (402 now), stored `scheduled`, and sent within a minute after this time. Quiet hours hold ' +
          "it as they hold a text sent now (422 `quiet_hours`, or moved to the window's opening).",
      }),
    ),
    category: z.optional(
      z.enum(MESSAGE_CATEGORIES).register(z.globalRegistry, {
        description: "What the text is; quiet hours may apply to `marketing` texts only (the organization's policy).",
      }),
    ),
  })
  .register(z.globalRegistry, { id: 'SendMessageRequest' });
