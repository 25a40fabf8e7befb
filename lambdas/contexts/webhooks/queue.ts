import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import * as z from 'zod/mini';
import '../../shared/schemas/zod-english';
import { MAX_ATTEMPTS, MAX_QUEUE_DELAY_MS } from './backoff';

/**
 * The delivery queue: SQS in AWS, an in-process timer queue locally. One message is one
 * attempt of one delivery; it carries the frozen body so the bytes signed on every retry are
 * the bytes the router froze.
 */
export const DeliveryMessageSchema = z.object({
  deliveryId: z.string().check(z.minLength(1)),
  tenantId: z.string().check(z.minLength(1)),
  endpointId: z.string().check(z.minLength(1)),
  /** Which attempt cycle (1, then +1 per operator redelivery); older cycles' messages are dropped. */
  cycle: z.int().check(z.gte(1)),
  attempt: z.int().check(z.gte(1), z.lte(MAX_ATTEMPTS)),
  body: z.string(),
  /** Epoch ms before which the attempt must not run: waits longer than the queue's maximum delay. */
  notBefore: z.optional(z.int()),
});

export type DeliveryMessage = z.infer<typeof DeliveryMessageSchema>;

export interface DeliveryQueue {
  /** Makes the message visible after `delayMs` (at most MAX_QUEUE_DELAY_MS; callers hop longer waits). */
  send(message: DeliveryMessage, delayMs: number): Promise<void>;
}

export function sqsDeliveryQueue(client: SQSClient, queueUrl: string): DeliveryQueue {
  return {
    async send(message, delayMs) {
      await client.send(
        new SendMessageCommand({
          QueueUrl: queueUrl,
          MessageBody: JSON.stringify(message),
          // Rounded up: an attempt may run a little late, never early.
          DelaySeconds: Math.min(Math.ceil(Math.max(0, delayMs) / 1000), MAX_QUEUE_DELAY_MS / 1000),
        }),
      );
    },
  };
}
