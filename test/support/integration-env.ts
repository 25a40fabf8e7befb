import { randomUUID } from 'node:crypto';
import { runOnLimitsEngine } from './on-limits-engine';

// Runs before each integration test file imports anything: the shared module reads TABLE_NAME and
// the engine's credentials at load time.
//
// Each file gets its own database on the one DynamoDB Local (started without -sharedDb, which
// keeps one database per access key): measured on DynamoDB Local 3.x, every request to a shared
// database slows with the data in all its tables (a 6,000-item batch load took 6 s into the
// first table and 65 s into the fifth), so the files that seed thousands of rows made every file
// after them time out. With a database each, the fifth load takes as long as the first.
const id = randomUUID().replace(/-/g, '');
process.env.LOCAL_ENGINE_ACCESS_KEY_ID = `it${id}`;
process.env.TABLE_NAME = `it-${id}`;

// `DYNAMODB_ENGINE=limits npm run test:integration`: every file on the limits-faithful engine.
if (process.env.DYNAMODB_ENGINE === 'limits') runOnLimitsEngine();
