import { randomUUID } from 'node:crypto';
import { runOnLimitsEngine } from '../support/on-limits-engine';

// Stryker's stand-in for integration-env.ts: one database per Stryker worker (not per file run, which
// would leave thousands of databases in DynamoDB Local's memory), a table of its own per file run,
// dropped after the file (mutation-teardown.ts). Every file on the limits engine.
const id = randomUUID().replace(/-/g, '');
process.env.LOCAL_ENGINE_ACCESS_KEY_ID = `mut${process.env.STRYKER_MUTATOR_WORKER ?? '0'}`;
process.env.TABLE_NAME = `mut-${id}`;
runOnLimitsEngine();
