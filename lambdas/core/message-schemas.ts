import * as z from 'zod';
import { e164 } from './phone';
import { cursorParam, limitParam } from './schemas';

/**
 * The shapes of texts: threads, messages and the send request. Like `schemas.ts`, they validate
 * requests, type the domain and generate the OpenAPI components (`.meta({ id })`).
 */
const dateTime = z.iso.datetime({ offset: true });
const uuid = z.uuid();

export const MESSAGE_DIRECTIONS = ['inbound', 'outbound'] as const;
export const MESSAGE_STATUSES = ['queued', 'sent', 'delivered', 'failed', 'received'] as const;
export type MessageDirection = (typeof MESSAGE_DIRECTIONS)[number];
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Text message body limit (spec section 8), in UTF-16 code units as JSON strings count them. */
export const MAX_BODY_LENGTH = 1600;

export const MessageSchema = z
  .object({
    id: uuid,
    tenantId: uuid,
    direction: z.enum(MESSAGE_DIRECTIONS),
    fromNumber: z.string(),
    toNumber: z.string(),
    counterpartNumber: z.string().meta({ description: 'The external number (E.164); the conversation this message belongs to' }),
    body: z.string(),
    status: z.enum(MESSAGE_STATUSES),
    messageSid: z.string().meta({
      description: "The telephony provider's message identifier; empty while a new outbound message waits for the carrier's answer",
    }),
    agentId: uuid.nullable().meta({ description: 'The sender, outbound only; null when sent through the API' }),
    isRead: z.boolean(),
    createdAt: dateTime,
  })
  .meta({ id: 'Message' });

export const ThreadSchema = z
  .object({
    counterpartNumber: z.string().meta({ description: 'External number, E.164; used as `{counterpart}` in paths' }),
    lastMessage: z.string(),
    lastDirection: z.enum(MESSAGE_DIRECTIONS),
    lastStatus: z.string(),
    lastAt: dateTime,
    messageCount: z.number().int(),
    hasUnread: z.boolean(),
  })
  .meta({ id: 'Thread' });

export const ThreadListSchema = z.object({ threads: z.array(ThreadSchema) }).meta({ id: 'ThreadList' });
export const MessageListSchema = z
  .object({
    messages: z.array(MessageSchema),
    nextCursor: uuid.nullable().meta({ description: 'Pass as `cursor` to get older messages; null on the last page' }),
  })
  .meta({ id: 'MessageList' });
export const MessageEnvelopeSchema = z.object({ message: MessageSchema }).meta({ id: 'MessageEnvelope' });

// ---------- requests ----------

export const SendMessageBody = z
  .strictObject({
    to: e164,
    body: z.string().min(1).max(MAX_BODY_LENGTH),
  })
  .meta({ id: 'SendMessageRequest' });

export const ListMessagesQuery = z.strictObject({ limit: limitParam, cursor: cursorParam });

export const CounterpartPath = z.object({
  counterpart: e164.meta({ description: 'External number, E.164; `+` may be sent literally or as %2B' }),
});

export type Message = z.infer<typeof MessageSchema>;
export type Thread = z.infer<typeof ThreadSchema>;
export type SendMessageInput = z.infer<typeof SendMessageBody>;
export type ListMessagesInput = z.infer<typeof ListMessagesQuery>;
