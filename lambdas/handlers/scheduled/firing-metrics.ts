/**
 * The business metric of the firing of scheduled texts that the stack alarms on: each run with texts emits how late
 * its latest text went to the carrier after its `sendAt`, in seconds (./fire-scheduled-texts.ts). No imports, so the
 * CDK app reads the name without loading the code that writes it.
 */
export const SCHEDULED_TEXT_LATENESS_METRIC = 'ScheduledTextLatenessMax';

/** A scheduled text goes out within a minute after its time (docs/api.md): later is the promise broken. */
export const LATE_AFTER_SECONDS = 60;
