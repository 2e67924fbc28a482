// Reading the Temporal connection the way Temporal's tools do (@temporalio/envconfig): a profile
// of a TOML file overridden by TEMPORAL_* variables; the TLS files checked when read, each
// problem naming its setting (issue 14); and the start-up failures told apart in one line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../infra/config';
import { temporalProblem } from '../../infra/temporal-connection';
import { createCertificateAuthority, writePemFiles, type Issued } from '../helpers/certificates';

const DAY_MS = 86_400_000;
let dir: string;
let client: Issued;
let files: Record<'ca' | 'cert' | 'key' | 'otherKey' | 'expiredCert' | 'expiredKey' | 'notPem', string>;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-settings-'));
  const ca = await createCertificateAuthority('Settings CA');
  client = await ca.issue({ commonName: 'worker', client: true });
  const other = await ca.issue({ commonName: 'other', client: true });
  const expired = await ca.issue({
    commonName: 'old-worker',
    client: true,
    notBefore: new Date(Date.now() - 3 * DAY_MS),
    notAfter: new Date(Date.now() - DAY_MS),
  });
  files = writePemFiles(dir, {
    ca: ca.certPem,
    cert: client.certPem,
    key: client.keyPem,
    otherKey: other.keyPem,
    expiredCert: expired.certPem,
    expiredKey: expired.keyPem,
    notPem: 'hello',
  });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const temporalOf = (env: Record<string, string>) => loadConfig(env).temporal;

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('the configuration was accepted');
}

function toml(name: string, text: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('Temporal settings from the environment', () => {
  it('address and namespace, plaintext when nothing asks for TLS', () => {
    expect(temporalOf({ TEMPORAL_ADDRESS: 'temporal:7233' })).toEqual({
      address: 'temporal:7233',
      namespace: 'default',
      tls: undefined,
      apiKey: undefined,
      metadata: undefined,
      summary: 'temporal:7233, namespace default, plaintext',
    });
  });

  it('an API key turns TLS on (as the SDK does) and never appears in the summary', () => {
    const s = temporalOf({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_NAMESPACE: 'ns.acct',
      TEMPORAL_API_KEY: 'secret-key-value',
    });
    expect(s).toMatchObject({ tls: true, apiKey: 'secret-key-value', namespace: 'ns.acct' });
    expect(s.summary).toBe('ns.acct.tmprl.cloud:7233, namespace ns.acct, TLS with API key');
  });

  it('mTLS from paths: the PEM contents are read once and handed to the connection', () => {
    const s = temporalOf({
      TEMPORAL_ADDRESS: 'localhost:7233',
      TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: files.key,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.ca,
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    expect(s.summary).toBe('localhost:7233, namespace default, TLS with client certificate');
    const tls = s.tls as any;
    expect(Buffer.from(tls.clientCertPair.crt).toString()).toBe(client.certPem);
    expect(Buffer.from(tls.clientCertPair.key).toString()).toBe(client.keyPem);
    expect(tls.serverNameOverride).toBe('temporal.internal');
  });

  it('mTLS from data variables works the same way', () => {
    const s = temporalOf({
      TEMPORAL_ADDRESS: 'localhost:7233',
      TEMPORAL_TLS_CLIENT_CERT_DATA: client.certPem,
      TEMPORAL_TLS_CLIENT_KEY_DATA: client.keyPem,
    });
    expect(Buffer.from((s.tls as any).clientCertPair.crt).toString()).toBe(client.certPem);
  });

  it('TEMPORAL_GRPC_META_* become gRPC headers', () => {
    expect(temporalOf({ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_GRPC_META_X_TENANT: 'acme' }).metadata).toEqual({
      'x-tenant': 'acme',
    });
  });
});

describe('Temporal settings from a profile file', () => {
  it('TEMPORAL_PROFILE picks a profile; a variable overrides the profile', () => {
    const file = toml(
      'two.toml',
      `[profile.default]\naddress = "local:7233"\n\n[profile.prod]\naddress = "prod.tmprl.cloud:7233"\nnamespace = "prod.acct"\napi_key = "from-file"\n`,
    );
    expect(temporalOf({ TEMPORAL_CONFIG_FILE: file }).address).toBe('local:7233');
    const prod = temporalOf({
      TEMPORAL_CONFIG_FILE: file,
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_NAMESPACE: 'other.acct',
    });
    expect(prod).toMatchObject({
      address: 'prod.tmprl.cloud:7233',
      namespace: 'other.acct',
      apiKey: 'from-file',
    });
  });

  it("a profile's TLS file that cannot be read is named by its key in the profile", () => {
    const file = toml(
      'tls.toml',
      `[profile.default]\naddress = "x:7233"\n[profile.default.tls]\nserver_ca_cert_path = "${dir}/none.pem"\n`,
    );
    expect(problems({ TEMPORAL_CONFIG_FILE: file })).toEqual([
      `tls.server_ca_cert_path (TEMPORAL_CONFIG_FILE=${file}, profile default): cannot read ${dir}/none.pem (ENOENT)`,
    ]);
  });

  it('a missing file, an unknown key, a missing profile: each refused, naming the file or profile', () => {
    expect(problems({ TEMPORAL_CONFIG_FILE: `${dir}/absent.toml` })).toEqual([
      `TEMPORAL_CONFIG_FILE: no file at ${dir}/absent.toml`,
    ]);
    const typo = toml('typo.toml', '[profile.default]\nadress = "x:7233"\n');
    expect(problems({ TEMPORAL_CONFIG_FILE: typo })[0]).toMatch(
      /^Temporal client config \(TEMPORAL_CONFIG_FILE=.*typo\.toml, profile default\): .*unrecognized.*adress/,
    );
    const one = toml('one.toml', '[profile.default]\naddress = "x:7233"\n');
    expect(problems({ TEMPORAL_CONFIG_FILE: one, TEMPORAL_PROFILE: 'staging' })[0]).toMatch(
      /profile staging\): Profile 'staging' not found/,
    );
  });
});

describe('bad TLS files are refused when the configuration is read, each naming its setting', () => {
  const base = { TEMPORAL_ADDRESS: 'x:7233' };

  it('an expired client certificate', () => {
    expect(
      problems({
        ...base,
        TEMPORAL_TLS_CLIENT_CERT_PATH: files.expiredCert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: files.expiredKey,
      }),
    ).toEqual([
      expect.stringMatching(/^TEMPORAL_TLS_CLIENT_CERT_PATH: the certificate CN=old-worker expired on /),
    ]);
  });

  it('a key that is not the certificate’s', () => {
    expect(
      problems({
        ...base,
        TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert,
        TEMPORAL_TLS_CLIENT_KEY_PATH: files.otherKey,
      }),
    ).toEqual([
      'TEMPORAL_TLS_CLIENT_KEY_PATH is not the key of the certificate in TEMPORAL_TLS_CLIENT_CERT_PATH',
    ]);
  });

  it('a certificate without its key', () => {
    expect(problems({ ...base, TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert })).toEqual([
      'TEMPORAL_TLS_CLIENT_CERT_PATH needs TEMPORAL_TLS_CLIENT_KEY_PATH or TEMPORAL_TLS_CLIENT_KEY_DATA too (mTLS takes a certificate and its key)',
    ]);
  });

  it('files that are not PEM, without quoting them', () => {
    const found = problems({
      ...base,
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: files.notPem,
      AGENTRY_ADMIN_KEY_ID: 'not-a-uuid',
    });
    expect(found).toContain(
      'TEMPORAL_TLS_SERVER_CA_CERT_PATH: holds no PEM certificate (the CA that signed the server certificate)',
    );
    // Every problem at once, the others included.
    expect(found.some((p) => p.startsWith('AGENTRY_ADMIN_KEY_ID'))).toBe(true);
    const key = problems({
      ...base,
      TEMPORAL_TLS_CLIENT_CERT_PATH: files.cert,
      TEMPORAL_TLS_CLIENT_KEY_DATA: 'x',
    });
    expect(key).toEqual([
      'TEMPORAL_TLS_CLIENT_KEY_DATA: not a PEM private key (PKCS#8, PKCS#1 or SEC1), or encrypted',
    ]);
  });

  it('TEMPORAL_TLS_DISABLE_HOST_VERIFICATION, which the TypeScript SDK cannot honour, is refused rather than ignored', () => {
    expect(problems({ ...base, TEMPORAL_TLS_DISABLE_HOST_VERIFICATION: 'true' })).toEqual([
      expect.stringContaining('TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported'),
    ]);
  });

  it("PostgreSQL's sslrootcert and Redis's CA are checked the same way", () => {
    expect(
      problems({ DATABASE_URL: `postgres://u@db:5432/a?sslmode=verify-full&sslrootcert=${dir}/nope.pem` }),
    ).toEqual([`DATABASE_URL's sslrootcert: cannot read ${dir}/nope.pem (ENOENT)`]);
    expect(problems({ REDIS_URL: 'redis://r:6379', AGENTRY_REDIS_TLS_CA_PATH: files.ca })).toEqual([
      'AGENTRY_REDIS_TLS_CA_PATH needs a rediss:// REDIS_URL (TLS)',
    ]);
    expect(problems({ REDIS_URL: 'rediss://r:6380', AGENTRY_REDIS_TLS_CA_PATH: files.notPem })).toEqual([
      'AGENTRY_REDIS_TLS_CA_PATH: holds no PEM certificate (the CA that signed the Redis server certificate)',
    ]);
    expect(
      loadConfig({ REDIS_URL: 'rediss://r:6380', AGENTRY_REDIS_TLS_CA_PATH: files.ca }).redisCa,
    ).toContain('BEGIN CERTIFICATE');
  });
});

describe('a failed connection check is one reason naming the settings to fix', () => {
  const settings = temporalOf({ TEMPORAL_ADDRESS: 'x:7233', TEMPORAL_API_KEY: 'secret-key' });
  // The core's own words, as the native connection reports them (recorded from real failures).
  const cases: Array<[string, unknown, RegExp]> = [
    [
      'namespace',
      Object.assign(new Error('Namespace no-such is not found.'), { code: 5 }),
      /^namespace "default" does not exist \(TEMPORAL_NAMESPACE\)$/,
    ],
    [
      'unknown key',
      new Error(
        `Failed to call GetSystemInfo: code: 'The request does not have valid authentication credentials', message: "invalid API key"`,
      ),
      /^the server refused the credentials \(TEMPORAL_API_KEY\)$/,
    ],
    [
      'no permission',
      new Error(
        `code: 'The caller does not have permission to execute the specified operation', message: "Request unauthorized."`,
      ),
      /^the credentials are not allowed on namespace "default" \(TEMPORAL_API_KEY\)$/,
    ],
    [
      'unknown CA',
      new Error(
        'tonic::transport::Error(Transport, ConnectError(Custom { kind: InvalidData, error: InvalidCertificate(UnknownIssuer) }))',
      ),
      /not signed by a trusted CA \(TEMPORAL_TLS_SERVER_CA_CERT_PATH\)/,
    ],
    [
      'client certificate required',
      new Error(
        'hyper::Error(Io, Custom { kind: InvalidData, error: "received fatal alert: CertificateRequired" })',
      ),
      /requires a client certificate/,
    ],
    [
      'refused connection',
      new Error(
        'tcp connect error, 127.0.0.1:1, Os { code: 111, kind: ConnectionRefused, message: "Connection refused" }',
      ),
      /^unreachable \(TEMPORAL_ADDRESS\)$/,
    ],
  ];
  it.each(cases)('%s', (_name, err, reason) => {
    const problem = temporalProblem(err, settings);
    expect(problem.reason).toMatch(reason);
    expect(problem.reason).not.toContain('secret-key');
  });
});
