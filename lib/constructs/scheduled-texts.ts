import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { TWILIO_SECRET_PRELOAD, type Carrier } from './carrier';
import type { FunctionFactory } from './function-factory';
import type { ServiceTable, TableAccess } from './table';

export type ScheduledTextsProps = {
  table: ServiceTable;
  functions: FunctionFactory;
  /** lambdas/handlers/scheduled/fire-scheduled-texts.ts */
  entry: string;
  tableAccess: TableAccess;
  /** Sends through Twilio with the stack's secret, as POST /messages does. */
  carrier: Carrier;
};

/** How often EventBridge starts a run: a text waits at most this long for the run that fires it. */
export const FIRING_SCHEDULE = Duration.minutes(1);

/**
 * A run's timeout. Runs never overlap (one execution reserved), so a run must end before the next
 * minute's starts; the handler stops taking new texts well before (FIRING_DEADLINE_MARGIN_MS in the
 * handler), leaving the rest to the next run.
 */
export const FIRING_TIMEOUT = Duration.seconds(55);

/**
 * Memory, and so CPU: Lambda gives a full vCPU at 1,769 MB, and a run is one Node.js thread
 * firing texts as fast as the carrier answers, so more would not fire faster (docs/capacity.md).
 */
export const FIRING_MEMORY_MB = 1769;

/**
 * The part that fires scheduled texts on AWS (docs/decisions.md, "Firing scheduled texts on AWS"):
 * one function on an EventBridge rule every minute, reading the due list (gsi2 `DUE#<shard>`, every
 * shard at once) and sending what is due through the carrier. One execution is reserved, which also
 * caps it at one: two runs would only race each other for the same texts (the row's status change
 * lets one of them send a text, never both, but the loser pays a cancelled transaction).
 */
export class ScheduledTexts extends Construct {
  readonly firer: LambdaFunction;
  readonly rule: events.Rule;

  constructor(scope: Construct, id: string, props: ScheduledTextsProps) {
    super(scope, id);
    this.firer = props.functions.create('FireScheduledTexts', {
      entry: props.entry,
      description: 'Sends the scheduled texts that are due, once each, every minute',
      timeout: FIRING_TIMEOUT,
      memorySize: FIRING_MEMORY_MB,
      preload: [TWILIO_SECRET_PRELOAD],
      reservedConcurrency: 1,
    });
    props.table.grant(this.firer, props.tableAccess);
    props.carrier.connectSender(this.firer);
    this.rule = new events.Rule(this, 'Schedule', {
      description: 'Fires the scheduled texts that are due',
      schedule: events.Schedule.rate(FIRING_SCHEDULE),
      // Lambda's own queue of asynchronous events keeps its defaults: an event that finds the previous run still
      // going, or a failed run, comes back later as one more run, which reads the same due list and is harmless.
      targets: [new targets.LambdaFunction(this.firer, { retryAttempts: 0 })],
    });
  }
}
