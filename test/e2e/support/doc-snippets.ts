import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../support/local-runtime';

/**
 * Runs the webhook verification code of docs/api.md exactly as printed: each snippet is the code
 * block after `<!-- verification snippet: <name> -->`, written to a file of its own and run by its
 * language's interpreter, so the page cannot show code that does not work.
 */
export type SignedDelivery = { timestamp: string; signature: string; body: string; secret: string };

const API_DOC = join(REPO_ROOT, 'docs', 'api.md');

export function docSnippet(name: string): string {
  const page = readFileSync(API_DOC, 'utf8');
  const found = new RegExp(`<!-- verification snippet: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(page);
  if (!found) throw new Error(`docs/api.md has no verification snippet named ${name}`);
  return found[1];
}

function inTempDir<T>(work: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'cct-snippet-'));
  try {
    return work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The TypeScript snippet's verifySignature on each delivery, run by Node with tsx. */
export function runTypeScriptSnippet(deliveries: SignedDelivery[]): boolean[] {
  return inTempDir((dir) => {
    writeFileSync(join(dir, 'verify.ts'), docSnippet('typescript'));
    writeFileSync(
      join(dir, 'run.ts'),
      [
        "import { verifySignature } from './verify';",
        'const deliveries = JSON.parse(process.argv[2]) as { timestamp: string; signature: string; body: string; ' +
          'secret: string }[];',
        'console.log(JSON.stringify(deliveries.map((d) => verifySignature(d.timestamp, d.signature, ' +
          'Buffer.from(d.body), d.secret))));',
      ].join('\n'),
    );
    const output = execFileSync(
      process.execPath,
      ['--import', 'tsx', join(dir, 'run.ts'), JSON.stringify(deliveries)],
      { cwd: REPO_ROOT, encoding: 'utf8' },
    );
    return JSON.parse(output) as boolean[];
  });
}

/** The Python snippet's verify_signature on each delivery; undefined when this machine has no python3. */
export function runPythonSnippet(deliveries: SignedDelivery[]): boolean[] | undefined {
  if (spawnSync('python3', ['--version']).error) return undefined;
  return inTempDir((dir) => {
    const harness = [
      docSnippet('python'),
      '',
      'import json, sys',
      'deliveries = json.loads(sys.argv[1])',
      'print(json.dumps([verify_signature(d["timestamp"], d["signature"], d["body"].encode(), d["secret"]) for d in ' +
        'deliveries]))',
    ].join('\n');
    writeFileSync(join(dir, 'verify.py'), harness);
    return JSON.parse(
      execFileSync('python3', [join(dir, 'verify.py'), JSON.stringify(deliveries)], { encoding: 'utf8' }),
    ) as boolean[];
  });
}

/**
 * A shell snippet run by bash in a directory holding `body.json`, with the given variables; its
 * output. Asynchronous: a snippet may post to a receiver served by this very process.
 */
export async function runShellSnippet(name: string, body: string, variables: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'cct-snippet-'));
  try {
    writeFileSync(join(dir, 'body.json'), body);
    const { stdout } = await promisify(execFile)('bash', ['-c', docSnippet(name)], {
      cwd: dir,
      env: { ...process.env, ...variables },
      encoding: 'utf8',
    });
    return stdout.trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
