import { Duration } from 'aws-cdk-lib';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import type { FunctionFactory } from './function-factory';
import type { ServiceTable, TableAccess } from './table';

export type TextSettlementProps = {
  table: ServiceTable;
  functions: FunctionFactory;
  /** lambdas/handlers/scheduled/settle-texts.ts */
  entry: string;
  tableAccess: TableAccess;
};

/**
 * How often the sweep runs. A text is failed at most this long after its grace period (one hour,
 * lambdas/contexts/texting/settlement.ts) ends, unless an outage's backlog is still being worked
 * through; each run reads only the unsettled worklist.
 */
export const SETTLEMENT_SCHEDULE = Duration.minutes(1);

/**
 * The settlement sweep of texts whose carrier outcome stayed unknown: one function on an
 * EventBridge schedule. A run starts texts for at most 45 s (its budget: SWEEP_DEFAULTS in
 * settlement.ts, less than the schedule so runs do not overlap), the rest of the minute's timeout
 * lets those under way finish (docs/capacity.md sizes a run).
 */
export class TextSettlement extends Construct {
  readonly sweeper: LambdaFunction;

  constructor(scope: Construct, id: string, props: TextSettlementProps) {
    super(scope, id);
    this.sweeper = props.functions.create('SettleTexts', {
      entry: props.entry,
      description: 'Fails and refunds texts whose carrier outcome stayed unknown past the grace period',
      timeout: Duration.minutes(1),
    });
    props.table.grant(this.sweeper, props.tableAccess);
    new events.Rule(this, 'Schedule', {
      description: 'Runs the settlement sweep of texts with an unknown carrier outcome',
      schedule: events.Schedule.rate(SETTLEMENT_SCHEDULE),
      targets: [new targets.LambdaFunction(this.sweeper, { retryAttempts: 0 })],
    });
  }
}
