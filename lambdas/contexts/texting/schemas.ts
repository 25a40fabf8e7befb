import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import { nextCursorField } from '../../shared/schemas/next-cursor';
import type { ListMessagesQuery } from './requests/list-messages';
import type { ListThreadsQuery } from './requests/list-threads';
import type { SendMessageBody } from './requests/send-message';
import { MESSAGE_CATEGORIES } from './message-categories';

/**
 * The shapes of texts: threads and messages (responses), and the input types of the request
 * schemas (./requests/, one module per route). Like every context's schemas, they type the domain
 * and generate the OpenAPI components (`.register(z.globalRegistry, { id })`).
 */
const dateTime = z.iso.datetime({ offset: true });
const uuid = z.uuid();

export const MESSAGE_DIRECTIONS = ['inbound', 'outbound'] as const;
export const MESSAGE_STATUSES = ['scheduled', 'queued', 'sent', 'delivered', 'failed', 'canceled', 'received'] as const;
/** Why a scheduled text was canceled: by the API, its recipient opted out, or billing was blocked at its time. */
export const CANCEL_REASONS = ['api', 'opted_out', 'billing'] as const;
export type CancelReason = (typeof CANCEL_REASONS)[number];
export type MessageDirection = (typeof MESSAGE_DIRECTIONS)[number];
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export const MessageSchema = z
  .object({
    id: uuid,
    tenantId: uuid,
    direction: z.enum(MESSAGE_DIRECTIONS),
    fromNumber: z.string(),
    toNumber: z.string(),
    counterpartNumber: z.string().register(z.globalRegistry, {
      description: 'The external number (E.164); the conversation this message belongs to',
    }),
    body: z.string(),
    status: z.enum(MESSAGE_STATUSES).register(z.globalRegistry, {
      description:
        'Outbound: `scheduled` (charged, waiting for its `sendAt`; `canceled` if canceled before, and refunded), ' +
        'then `queued` (charged; with the carrier, or its answer still pending), then `sent`, `delivered` or ' +
        '`failed`, never backwards. ' +
        'A `failed` text is not billed (its charge is refunded). A text whose carrier outcome is still unknown one ' +
        'hour after it was queued ' +
        'is failed and refunded. Inbound: `received`.',
    }),
    messageSid: z.string().register(z.globalRegistry, {
      description:
        "The telephony provider's message identifier; empty while a new outbound message waits for the carrier's " +
        'answer',
    }),
    agentId: z
      .nullable(uuid)
      .register(z.globalRegistry, { description: 'The sender, outbound only; null when sent through the API' }),
    isRead: z.boolean(),
    createdAt: dateTime,
    sendAt: z.optional(dateTime).register(z.globalRegistry, {
      description:
        'A scheduled text only: when it goes out (it is sent within a minute after this time, never before). ' +
        'Absent on texts sent at once.',
    }),
    category: z.optional(z.enum(MESSAGE_CATEGORIES)).register(z.globalRegistry, {
      description: 'The `category` the send request gave, if any (quiet hours may apply to `marketing` only).',
    }),
    cancelReason: z.optional(z.enum(CANCEL_REASONS)).register(z.globalRegistry, {
      description:
        'A `canceled` text only: `api` (POST /messages/{id}/cancel), `opted_out` (its recipient opted out before ' +
        'its time) or `billing` (billing was blocked at its time).',
    }),
  })
  .register(z.globalRegistry, { id: 'Message' });

export const ThreadSchema = z
  .object({
    counterpartNumber: z
      .string()
      .register(z.globalRegistry, { description: 'External number, E.164; used as `{counterpart}` in paths' }),
    lastMessage: z.string(),
    lastDirection: z.enum(MESSAGE_DIRECTIONS),
    lastStatus: z.string(),
    lastAt: dateTime,
    messageCount: z.int(),
    hasUnread: z.boolean(),
  })
  .register(z.globalRegistry, { id: 'Thread' });

export const ThreadListSchema = z
  .object({ threads: z.array(ThreadSchema), nextCursor: nextCursorField })
  .register(z.globalRegistry, { id: 'ThreadList' });
export const MessageListSchema = z
  .object({
    messages: z.array(MessageSchema),
    nextCursor: z
      .nullable(uuid)
      .register(z.globalRegistry, { description: 'Pass as `cursor` to get older messages; null on the last page' }),
  })
  .register(z.globalRegistry, { id: 'MessageList' });
export const MessageEnvelopeSchema = z
  .object({ message: MessageSchema })
  .register(z.globalRegistry, { id: 'MessageEnvelope' });

export type Message = z.infer<typeof MessageSchema>;
export type Thread = z.infer<typeof ThreadSchema>;
export type SendMessageInput = z.infer<typeof SendMessageBody>;
export type ListMessagesInput = z.infer<typeof ListMessagesQuery>;
export type ListThreadsInput = z.infer<typeof ListThreadsQuery>;

/**
 * Why an outbound text failed, kept on its row (not part of the API's Message) and said by the
 * message.failed event: the same words as the API's errors where they meet.
 */
export const FAILURE_REASONS = [
  'carrier_rejected',
  'carrier_failed',
  'recipient_opted_out',
  'carrier_unavailable',
  'carrier_outcome_unknown',
] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];
