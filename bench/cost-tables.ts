/**
 * `npx tsx bench/cost-tables.ts [results.json]`: the cost tables of docs/deploy.md ("What a million
 * requests cost", the monthly bill) and bench/README.md section 9, recomputed from a results file
 * of `npm run bench` (bench/results.json by default) with the prices of bench/support/cost.ts.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { costTables, type CostInputs } from './support/cost-report';

const file = process.argv[2] ?? join(__dirname, 'results.json');
console.log(costTables(JSON.parse(readFileSync(file, 'utf8')) as CostInputs));
