import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The Node.js versions the tools run on, stated once truthfully: package.json's `engines` is the
 * highest minimum any installed package declares, and the README and the runbook say the same.
 * A dependency upgrade that raises its own minimum fails here until the statement follows.
 */
const REPO_ROOT = resolve(__dirname, '..', '..');
const readJson = (path: string) =>
  JSON.parse(readFileSync(path, 'utf8')) as { name?: string; version?: string; engines?: { node?: string } };

type Version = [number, number, number];
const compare = (a: Version, b: Version) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
const format = (v: Version) => v.join('.');

/**
 * The lowest version a range admits, e.g. `^20.19.0 || ^22.13.0 || >=24` -> 20.19.0, `>=22` -> 22.0.0,
 * `*` -> 0.0.0: the first version of each alternative, the lowest of them.
 */
function lowestAdmitted(range: string): Version {
  const lows = range.split('||').map((alternative): Version => {
    const match = /(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(alternative);
    return match ? [Number(match[1]), Number(match[2] ?? 0), Number(match[3] ?? 0)] : [0, 0, 0];
  });
  return lows.sort(compare)[0];
}

/** Every installed package's Node.js range, as `name@version`, nested installs included. */
function installedRanges(dir = join(REPO_ROOT, 'node_modules')): { pkg: string; range: string }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.name.startsWith('@')) return installedRanges(path);
      const manifest = join(path, 'package.json');
      if (!existsSync(manifest)) return [];
      const { name, version, engines } = readJson(manifest);
      const own = engines?.node ? [{ pkg: `${name}@${version}`, range: engines.node }] : [];
      return [...own, ...installedRanges(join(path, 'node_modules'))];
    });
}

describe('the Node.js versions the tools run on', () => {
  const declared = readJson(join(REPO_ROOT, 'package.json')).engines?.node ?? '';
  const minimum = lowestAdmitted(declared);

  it('declares in package.json exactly the highest minimum of every installed package', () => {
    // Prepare
    const ranges = installedRanges();
    const highest = ranges.reduce(
      (top, { range }) => (compare(lowestAdmitted(range), top) > 0 ? lowestAdmitted(range) : top),
      [0, 0, 0] as Version,
    );

    // Act
    const demanding = ranges
      .filter(({ range }) => compare(lowestAdmitted(range), minimum) > 0)
      .map(({ pkg, range }) => `${pkg} (${range})`);

    // Assess
    expect(ranges.length).toBeGreaterThan(100);
    expect(declared).toBe(`>=${format(highest)}`);
    expect(demanding).toEqual([]);
  });

  it('is what the README and the deploy runbook tell users', () => {
    // Prepare
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const runbook = readFileSync(join(REPO_ROOT, 'docs', 'deploy.md'), 'utf8');

    // Act
    const statements = [readme, runbook].map((text) => /Node\.js (\d+\.\d+\.\d+) or later/.exec(text)?.[1]);

    // Assess
    expect(statements).toEqual([format(minimum), format(minimum)]);
  });
});
