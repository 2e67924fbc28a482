// How the processes reach Temporal, read the way Temporal's own tools read it: a profile of a
// TOML client config file (TEMPORAL_CONFIG_FILE, TEMPORAL_PROFILE) overridden by TEMPORAL_ADDRESS,
// TEMPORAL_NAMESPACE, TEMPORAL_API_KEY, TEMPORAL_TLS*, TEMPORAL_GRPC_META_*, through the SDK's own
// loader (@temporalio/envconfig). What the loader leaves to the connection (files it reads, PEM it
// hands to the native client) is checked here, so that a wrong file is a configuration problem
// naming its setting rather than an opaque error from the connection. No secret is ever quoted.
import { existsSync } from 'node:fs';
import { loadClientConfigProfile, toClientOptions, type ClientConfigProfile } from '@temporalio/envconfig';
import type { NativeConnectionOptions } from '@temporalio/worker';
import type { Reader } from './config-reader';
import { checkCertificates, checkKeyPair, readPem, type Pem } from './pem-files';

export interface TemporalSettings {
  /** host:port; unset, `npm start` runs its own dev server and the production processes refuse to start. */
  address: string | undefined;
  namespace: string;
  /** Options shared by the worker's NativeConnection and the client's Connection. */
  tls: NativeConnectionOptions['tls'];
  apiKey: string | undefined;
  metadata: NativeConnectionOptions['metadata'];
  /** What the settings say, without secrets: "127.0.0.1:7233, namespace default, mTLS". */
  summary: string;
}

/** Every variable the loader reads, recorded for the documented list (one entry for the prefix). */
const SETTINGS: Array<[name: string, fallback?: string]> = [
  ['TEMPORAL_ADDRESS'],
  ['TEMPORAL_NAMESPACE', 'default'],
  ['TEMPORAL_API_KEY'],
  ['TEMPORAL_TLS'],
  ['TEMPORAL_TLS_CLIENT_CERT_PATH'],
  ['TEMPORAL_TLS_CLIENT_CERT_DATA'],
  ['TEMPORAL_TLS_CLIENT_KEY_PATH'],
  ['TEMPORAL_TLS_CLIENT_KEY_DATA'],
  ['TEMPORAL_TLS_SERVER_CA_CERT_PATH'],
  ['TEMPORAL_TLS_SERVER_CA_CERT_DATA'],
  ['TEMPORAL_TLS_SERVER_NAME'],
  ['TEMPORAL_CONFIG_FILE'],
  ['TEMPORAL_PROFILE'],
  ['TEMPORAL_GRPC_META_*'],
];

type TlsFile = 'client_cert' | 'client_key' | 'server_ca_cert';
const ENV_OF: Record<TlsFile, string> = {
  client_cert: 'TEMPORAL_TLS_CLIENT_CERT',
  client_key: 'TEMPORAL_TLS_CLIENT_KEY',
  server_ca_cert: 'TEMPORAL_TLS_SERVER_CA_CERT',
};

export function readTemporalSettings(r: Reader): TemporalSettings {
  for (const [name, fallback] of SETTINGS) {
    if (fallback === undefined) r.str(name);
    else r.str(name, fallback);
  }
  const env = Object.fromEntries(
    Object.entries(r.env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''),
  );
  const where = profileOrigin(env);
  const empty: TemporalSettings = {
    address: env.TEMPORAL_ADDRESS,
    namespace: env.TEMPORAL_NAMESPACE ?? 'default',
    tls: undefined,
    apiKey: undefined,
    metadata: undefined,
    summary: '',
  };
  if (env.TEMPORAL_CONFIG_FILE !== undefined && !existsSync(env.TEMPORAL_CONFIG_FILE)) {
    r.errors.push(`TEMPORAL_CONFIG_FILE: no file at ${env.TEMPORAL_CONFIG_FILE}`);
    return empty;
  }
  if (env.TEMPORAL_TLS_DISABLE_HOST_VERIFICATION !== undefined) {
    r.errors.push(
      'TEMPORAL_TLS_DISABLE_HOST_VERIFICATION is not supported by the TypeScript SDK: set TEMPORAL_TLS_SERVER_NAME to the name on the server certificate',
    );
  }
  let profile: ClientConfigProfile;
  try {
    profile = loadClientConfigProfile({ overrideEnvVars: env, configFileStrict: true });
  } catch (err) {
    r.errors.push(`Temporal client config ${where}: ${oneLine(err)}`);
    return empty;
  }
  const tls = profile.tls;
  const files = tls && !tls.disabled ? checkTlsFiles(r, tls, env, where) : undefined;
  if (tls && !tls.disabled && !files) return empty;
  if (files) {
    // The checked contents replace the paths, so the connection never reads a file twice.
    for (const key of ['clientCert', 'clientKey', 'serverCACert'] as const) {
      const pem = files[key];
      if (pem !== undefined) tls![key] = { data: pem };
    }
  }
  const { connectionOptions, namespace } = toClientOptions(profile);
  const settings: TemporalSettings = {
    address: connectionOptions.address,
    namespace: namespace ?? 'default',
    tls: connectionOptions.tls,
    apiKey: connectionOptions.apiKey,
    metadata: connectionOptions.metadata,
    summary: '',
  };
  settings.summary = summarize(settings);
  return settings;
}

/** "(TEMPORAL_CONFIG_FILE=/etc/temporal.toml, profile prod)", for messages about the file. */
function profileOrigin(env: Record<string, string>): string {
  const parts = [
    env.TEMPORAL_CONFIG_FILE ? `TEMPORAL_CONFIG_FILE=${env.TEMPORAL_CONFIG_FILE}` : 'default file',
    `profile ${env.TEMPORAL_PROFILE ?? 'default'}`,
  ];
  return `(${parts.join(', ')})`;
}

interface TlsSources {
  clientCert?: { path: string } | { data: string | Uint8Array };
  clientKey?: { path: string } | { data: string | Uint8Array };
  serverCACert?: { path: string } | { data: string | Uint8Array };
}

/** Reads and checks each PEM the TLS settings name; returns their contents when all are sound. */
function checkTlsFiles(
  r: Reader,
  tls: TlsSources,
  env: Record<string, string>,
  where: string,
): Partial<Record<keyof TlsSources, string>> | undefined {
  const before = r.errors.length;
  const read = (key: keyof TlsSources, file: TlsFile): Pem | undefined => {
    const source = tls[key];
    if (source === undefined) return undefined;
    const setting = settingName(file, 'path' in source ? 'PATH' : 'DATA', env, where);
    if ('path' in source) return readPem(setting, source.path, r.errors);
    return {
      pem: typeof source.data === 'string' ? source.data : Buffer.from(source.data).toString(),
      setting,
    };
  };
  const cert = read('clientCert', 'client_cert');
  const key = read('clientKey', 'client_key');
  const ca = read('serverCACert', 'server_ca_cert');
  if (r.errors.length > before) return undefined;
  if ((cert === undefined) !== (key === undefined)) {
    const [given, missing] = cert ? [cert.setting, ENV_OF.client_key] : [key!.setting, ENV_OF.client_cert];
    r.errors.push(
      `${given} needs ${missing}_PATH or ${missing}_DATA too (mTLS takes a certificate and its key)`,
    );
    return undefined;
  }
  if (ca) checkCertificates(ca, 'the CA that signed the server certificate', r.errors);
  if (cert && key) checkKeyPair(cert, key, r.errors);
  if (r.errors.length > before) return undefined;
  return { clientCert: cert?.pem, clientKey: key?.pem, serverCACert: ca?.pem };
}

/** The variable that set a TLS file, or its key in the profile when the file set it. */
function settingName(
  file: TlsFile,
  kind: 'PATH' | 'DATA',
  env: Record<string, string>,
  where: string,
): string {
  const variable = `${ENV_OF[file]}_${kind}`;
  return env[variable] !== undefined ? variable : `tls.${file}_${kind.toLowerCase()} ${where}`;
}

function summarize(s: TemporalSettings): string {
  const tls = s.tls ? 'TLS' : 'plaintext';
  const auth = [
    typeof s.tls === 'object' && s.tls?.clientCertPair ? 'client certificate' : undefined,
    s.apiKey !== undefined ? 'API key' : undefined,
  ].filter(Boolean);
  return `${s.address ?? '(no address)'}, namespace ${s.namespace}, ${tls}${auth.length ? ` with ${auth.join(' and ')}` : ''}`;
}

const oneLine = (err: unknown): string =>
  (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, '; ');
