// The connection to Temporal from the settings (infra/temporal-settings.ts), for workers and for
// the API's client alike (a NativeConnection serves both, and its transport errors say what
// failed, where the pure-JS client only says it missed a deadline). It is checked at start by
// describing the namespace, which proves in one call that the server is reachable, the TLS
// handshake works, the credentials are accepted and the namespace exists; a failure is one line
// naming what to fix, and /readyz gives the same reason while the process runs.
import { NativeConnection } from '@temporalio/worker';
import type { TemporalSettings } from './temporal-settings';

/** gRPC status codes the check tells apart. */
const GRPC = {
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  UNAUTHENTICATED: 16,
  UNAVAILABLE: 14,
  DEADLINE_EXCEEDED: 4,
} as const;

/**
 * Temporal is unusable with these settings. `reason` says what to fix in our words (settings
 * named, no address, no secret: /readyz shows it); the message adds the server's own words.
 */
export class TemporalConnectionError extends Error {
  readonly reason: string;
  constructor(err: unknown, settings: TemporalSettings) {
    const { reason, detail } = temporalProblem(err, settings);
    super(`Temporal (${settings.summary}): ${reason}${detail ? `: ${detail}` : ''}`);
    this.reason = reason;
  }
}

const options = (s: TemporalSettings) => ({
  address: s.address!,
  ...(s.tls !== undefined && s.tls !== null ? { tls: s.tls } : {}),
  ...(s.apiKey !== undefined ? { apiKey: s.apiKey } : {}),
  ...(s.metadata !== undefined ? { metadata: s.metadata } : {}),
});

/** The connection of workers and of the API's client, checked. */
export async function connectTemporal(settings: TemporalSettings): Promise<NativeConnection> {
  let connection: NativeConnection;
  try {
    connection = await NativeConnection.connect(options(settings));
  } catch (err) {
    throw new TemporalConnectionError(err, settings);
  }
  try {
    await checkNamespace(connection.workflowService, settings);
  } catch (err) {
    await connection.close().catch(() => undefined);
    throw err;
  }
  return connection;
}

interface NamespaceService {
  describeNamespace(request: { namespace: string }): Promise<unknown>;
}

/** Reachable, authenticated, allowed and the namespace exists; else a TemporalConnectionError. */
export async function checkNamespace(service: NamespaceService, settings: TemporalSettings): Promise<void> {
  try {
    await service.describeNamespace({ namespace: settings.namespace });
  } catch (err) {
    throw new TemporalConnectionError(err, settings);
  }
}

/** rustls' words for a server certificate the client cannot trust, and what to set. */
const SERVER_CERTIFICATE: Array<[RegExp, string]> = [
  [
    /unknownissuer|unknown ca|self.signed/,
    'the server certificate is not signed by a trusted CA (TEMPORAL_TLS_SERVER_CA_CERT_PATH)',
  ],
  [
    /notvalidforname|not valid for name/,
    'the server certificate is not for this name (TEMPORAL_TLS_SERVER_NAME, TEMPORAL_ADDRESS)',
  ],
  [/expired/, 'the server certificate has expired'],
  [
    /certificaterequired|certificate required/,
    'the server requires a client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH)',
  ],
  [
    /badcertificate|bad certificate|unknown_ca|decrypterror/,
    'the server refused the client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH)',
  ],
];

/** What is wrong and which settings to look at, then the server's or the transport's words. */
export function temporalProblem(
  err: unknown,
  settings: TemporalSettings,
): { reason: string; detail: string } {
  const code = (err as { code?: unknown }).code;
  const detail = (err instanceof Error ? err.message : String(err)).replace(/\s*\n\s*/g, '; ');
  const text = detail.toLowerCase();
  const credentials =
    [
      settings.apiKey !== undefined ? 'TEMPORAL_API_KEY' : undefined,
      typeof settings.tls === 'object' && settings.tls?.clientCertPair
        ? 'TEMPORAL_TLS_CLIENT_CERT_PATH'
        : undefined,
    ]
      .filter(Boolean)
      .join(', ') || 'none given: TEMPORAL_API_KEY or TEMPORAL_TLS_CLIENT_CERT_PATH';
  const reason = (): string => {
    if (code === GRPC.NOT_FOUND || /namespace .*(not found|does not exist)/.test(text))
      return `namespace "${settings.namespace}" does not exist (TEMPORAL_NAMESPACE)`;
    if (
      code === GRPC.PERMISSION_DENIED ||
      /permission denied|does not have permission|unauthorized/.test(text)
    )
      return `the credentials are not allowed on namespace "${settings.namespace}" (${credentials})`;
    if (code === GRPC.UNAUTHENTICATED || /unauthenticated|valid authentication credentials/.test(text))
      return `the server refused the credentials (${credentials})`;
    for (const [pattern, said] of SERVER_CERTIFICATE) if (pattern.test(text)) return `TLS: ${said}`;
    if (/certificate|handshake|tls|ssl|alert|http\/2 was not negotiated/.test(text))
      return 'the TLS handshake failed (TEMPORAL_TLS_SERVER_CA_CERT_PATH, TEMPORAL_TLS_SERVER_NAME, TEMPORAL_TLS_CLIENT_CERT_PATH)';
    // A server that wants TLS, or a client certificate it trusts, closes a connection without one.
    if (/connectionreset|connection reset|brokenpipe|broken pipe|connection closed/.test(text))
      return !settings.tls
        ? 'the server closed the connection: it may expect TLS (TEMPORAL_TLS=true, TEMPORAL_TLS_SERVER_CA_CERT_PATH)'
        : typeof settings.tls === 'object' && settings.tls?.clientCertPair
          ? 'the server closed the connection during the handshake: it may not trust the client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH)'
          : 'the server closed the connection during the handshake: it may require a client certificate (TEMPORAL_TLS_CLIENT_CERT_PATH, TEMPORAL_TLS_CLIENT_KEY_PATH)';
    if (
      code === GRPC.UNAVAILABLE ||
      code === GRPC.DEADLINE_EXCEEDED ||
      /connect|unavailable|timed out|deadline/.test(text)
    )
      return 'unreachable (TEMPORAL_ADDRESS)';
    return 'the server answered with an error';
  };
  return { reason: reason(), detail };
}
