import type { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { GSIS, TABLE_KEYS, TTL_ATTRIBUTE, type GsiName } from '../../lambdas/shared/table/table-schema';

/**
 * The only DynamoDB actions a function of this service may be granted. A closed list keeps
 * wildcards (`dynamodb:*`, `dynamodb:Get*`) out by construction. `TransactWriteItems` is not an IAM
 * action: a transaction is authorized per item by Put/Update/Delete/ConditionCheckItem.
 */
export type TableAction =
  | 'dynamodb:GetItem'
  | 'dynamodb:BatchGetItem'
  | 'dynamodb:Query'
  | 'dynamodb:PutItem'
  | 'dynamodb:UpdateItem'
  | 'dynamodb:DeleteItem'
  | 'dynamodb:ConditionCheckItem';

/** What a function does to the table, stated by intent; `indexes` are the GSIs it queries. */
export type TableAccess = {
  actions: readonly TableAction[];
  indexes?: readonly GsiName[];
  /**
   * Restricts the actions to items whose partition key matches one of these patterns (`*` is
   * any run of characters), with the IAM condition key `dynamodb:LeadingKeys`.
   */
  partitionKeyPatterns?: readonly string[];
};

/** Actions that can target an index ARN; the others only make sense on the table. */
const INDEX_ACTIONS: readonly TableAction[] = ['dynamodb:Query'];

export const WRITE_ACTIONS: readonly TableAction[] = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:ConditionCheckItem',
];

export type ServiceTableProps = {
  removalPolicy: RemovalPolicy;
  deletionProtection: boolean;
};

/**
 * The single table, built from `lambdas/shared/table/table-schema.ts` (the schema DynamoDB Local is also
 * created from, so the two cannot drift).
 */
export class ServiceTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: ServiceTableProps) {
    super(scope, id);
    const key = (name: string): dynamodb.Attribute => ({ name, type: dynamodb.AttributeType.STRING });

    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: key(TABLE_KEYS.partitionKey),
      sortKey: key(TABLE_KEYS.sortKey),
      // On-demand: traffic is spiky and per-tenant; no capacity to plan or to be throttled by.
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      // The webhook router needs both images: "became completed" is a transition, not a state.
      stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      // A KMS key in the account (aws/dynamodb): every use is in CloudTrail, no key policy to
      // maintain, and no extra grant for the functions (DynamoDB uses it on their behalf).
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      deletionProtection: props.deletionProtection,
      removalPolicy: props.removalPolicy,
    });

    for (const gsi of Object.values(GSIS)) {
      this.table.addGlobalSecondaryIndex({
        indexName: gsi.indexName,
        partitionKey: key(gsi.partitionKey),
        sortKey: key(gsi.sortKey),
        // table-schema.ts says why each index projects what it does.
        ...(gsi.projection.type === 'ALL'
          ? { projectionType: dynamodb.ProjectionType.ALL }
          : { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...gsi.projection.attributes] }),
      });
    }
  }

  get tableName(): string {
    return this.table.tableName;
  }

  indexArn(index: GsiName): string {
    return `${this.table.tableArn}/index/${GSIS[index].indexName}`;
  }

  /**
   * The one way a function gets table permissions: exactly the listed actions on the table, and
   * Query on the listed indexes. Nothing is granted for an empty action list.
   */
  grant(grantee: iam.IGrantable, access: TableAccess): void {
    if (access.actions.length === 0) return;
    const actions = [...new Set(access.actions)].sort();
    const conditions = access.partitionKeyPatterns
      ? { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...access.partitionKeyPatterns] } }
      : undefined;
    const allow = (statementActions: string[], resources: string[]) =>
      grantee.grantPrincipal.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: statementActions, resources, ...(conditions && { conditions }) }),
      );
    allow(actions, [this.table.tableArn]);
    const indexes = access.indexes ?? [];
    if (indexes.length > 0) {
      const indexActions = actions.filter((a) => INDEX_ACTIONS.includes(a));
      if (indexActions.length === 0)
        throw new Error(`Index access (${indexes.join(', ')}) needs an index action such as dynamodb:Query`);
      allow(
        indexActions,
        indexes.map((i) => this.indexArn(i)),
      );
    }
  }

  /** Reading the change stream (the webhook router's event source). */
  grantStreamRead(grantee: iam.IGrantable): void {
    this.table.grantStreamRead(grantee);
  }
}
