import { ROW_TYPES } from '../../shared/table/row-types';
import { TERMINAL_CALL_STATUSES } from '../calls/call-statuses';
import { CANCELED_MESSAGE_STATUS, FINAL_MESSAGE_STATUSES } from './event-types';

/**
 * Lambda event-source filter patterns for the router: only the row changes that can raise an
 * event or an enqueue request invoke it (rate-limit windows, claims, search entries and the
 * sender's own attempt updates do not). A coarse pre-filter: the router's code makes the exact decision
 * (e.g. "non-terminal -> terminal"), which a pattern cannot express. Built from the same
 * constants as the derivation, so the two cannot drift. The CDK construct passes each string
 * to `FilterCriteria.filter` (parsed) or `{ Pattern }` as is.
 */
export const ROUTER_FILTER_PATTERNS: Record<string, unknown>[] = [
  {
    eventName: ['INSERT', 'MODIFY'],
    dynamodb: { NewImage: { type: { S: [ROW_TYPES.call] }, status: { S: [...TERMINAL_CALL_STATUSES] } } },
  },
  {
    eventName: ['INSERT'],
    dynamodb: { NewImage: { type: { S: [ROW_TYPES.message] }, direction: { S: ['inbound'] } } },
  },
  {
    // message.delivered, message.failed, message.canceled: an outbound text changed while in a final status or
    // canceled (the derivation keeps only the change into it; later edits of a settled text, such as a late sid,
    // are no event). One pattern for the three: Lambda takes at most five per event source mapping.
    eventName: ['MODIFY'],
    dynamodb: {
      NewImage: {
        type: { S: [ROW_TYPES.message] },
        direction: { S: ['outbound'] },
        status: { S: [...FINAL_MESSAGE_STATUSES, CANCELED_MESSAGE_STATUS] },
      },
    },
  },
  {
    // voicemail.received (a voicemail turning ready), contact.* and consent.changed: one pattern for
    // the four kinds of row, since Lambda takes at most five filters per event source mapping. A
    // voicemail not yet ready, a contact's consent copy, a ledger row written again: the
    // derivation keeps what is an event.
    eventName: ['INSERT', 'MODIFY'],
    dynamodb: {
      NewImage: {
        type: { S: [ROW_TYPES.voicemail, ROW_TYPES.contact, ROW_TYPES.contactTombstone, ROW_TYPES.consent] },
      },
    },
  },
  {
    eventName: ['INSERT', 'MODIFY'],
    dynamodb: { NewImage: { type: { S: [ROW_TYPES.delivery] }, enqueueRequested: { BOOL: [true] } } },
  },
];

export const routerFilterPatternStrings = (): string[] => ROUTER_FILTER_PATTERNS.map((p) => JSON.stringify(p));
