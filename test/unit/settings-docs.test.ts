// Every setting infra/config.ts reads is documented, with its default, in the README's
// configuration table and in .env.example, and nothing documented there is a setting the code
// does not read (a renamed variable would otherwise be silently ignored).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { settingsRead } from '../../infra/config';

const ROOT = path.resolve(__dirname, '..', '..');
const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const envExample = readFileSync(path.join(ROOT, '.env.example'), 'utf8');
const settings = settingsRead();

/** The README's configuration table: each row's variables with the row's default column. */
function readmeRows(): { names: string[]; defaults: string }[] {
  const header = readme.indexOf('| variable');
  expect(header).toBeGreaterThanOrEqual(0);
  const rows = readme.slice(header).split('\n');
  const end = rows.findIndex((line) => !line.startsWith('|'));
  return rows
    .slice(2, end)
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .map(([, names = '', defaults = '']) => ({
      names: [...names.matchAll(/`([A-Z][A-Z0-9_]*\*?)`/g)].map((m) => m[1]!),
      defaults,
    }));
}

/** .env.example's variables, set (`NAME=value`) or shown commented out (`# NAME=`). */
function envExampleValues(): Map<string, string | null> {
  const values = new Map<string, string | null>();
  for (const line of envExample.split('\n')) {
    const m = /^(#\s*)?([A-Z][A-Z0-9_]*\*?)=(.*)$/.exec(line.trim());
    if (m) values.set(m[2]!, m[1] ? null : m[3]!);
  }
  return values;
}

describe('the documented settings are the ones the configuration reads', () => {
  it('reads a non-trivial set of settings', () => {
    expect(settings.length).toBeGreaterThan(40);
  });

  it('every setting has a README row whose default column shows its default', () => {
    const rows = readmeRows();
    const problems: string[] = [];
    for (const { name, default: value } of settings) {
      const row = rows.find((r) => r.names.includes(name));
      if (!row) problems.push(`${name}: no README row`);
      else if (value !== '' && !row.defaults.includes(`\`${value}\``))
        problems.push(`${name}: README default column "${row.defaults}" lacks \`${value}\``);
    }
    expect(problems).toEqual([]);
  });

  it('every setting is in .env.example, set to its default where it is set and has one', () => {
    const values = envExampleValues();
    // Services and secrets are placeholders for the operator's own values.
    const placeholders = new Set(['TEMPORAL_NAMESPACE', 'AGENTRY_CODEC_CORS_ORIGINS']);
    const problems: string[] = [];
    for (const { name, default: value } of settings) {
      if (!values.has(name)) problems.push(`${name}: not in .env.example`);
      else {
        const set = values.get(name);
        if (set !== null && value !== '' && set !== value && !placeholders.has(name))
          problems.push(`${name}: .env.example sets "${set}", the default is "${value}"`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('the README and .env.example name no setting the configuration does not read', () => {
    const read = new Set(settings.map((s) => s.name));
    // Read by others than infra/config.ts: OpenTelemetry's SDK and the scripts.
    const elsewhere = /^(OTEL_|TEMPORAL_CLI_|AGENTRY_CACHE_DIR$)/;
    const documented = [...readmeRows().flatMap((r) => r.names), ...envExampleValues().keys()];
    expect(documented.filter((name) => !read.has(name) && !elsewhere.test(name))).toEqual([]);
  });
});
