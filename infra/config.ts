// Configuration is read from the environment once, by a composition root, and every problem is
// reported at once. Every timeout and retry policy lives here so tests can shorten them.

import { LOOKUP_CACHE_TTL_MS } from './lookup-cache';
import type { IngestionProfile, LlmProfile, RetryProfile } from '../domain/activity-profiles';
import { DEFAULT_LIMITS, type Limits } from '../domain/limits';
import { ConfigError, Reader, type Env, type SettingRead } from './config-reader';
import { isUuid } from './ids';
import { checkCertificates, checkKeyPair, readPem, type Pem } from './pem-files';
import { readTemporalSettings, type TemporalSettings } from './temporal-settings';
import { readWorkerSettings, type WorkerSettings } from './worker-settings';

export type { IngestionProfile, LlmProfile, RetryProfile };
export { ConfigError };

/** pino's levels. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dbPoolMax: number;
  redisUrl: string | undefined;
  /** PEM of the CA that signed a `rediss://` server's certificate (else the system's CAs). */
  redisCa: string | undefined;
  redisPrefix: string;
  /** How to reach Temporal (address, namespace, TLS, API key), infra/temporal-settings.ts. */
  temporal: TemporalSettings;
  taskQueue: string;
  applicationSecret: string | undefined;
  applicationSecretPrevious: string | undefined;
  adminKeyId: string | undefined;
  adminKeySecret: string | undefined;
  authFailureLimit: number;
  authFailureWindowSeconds: number;
  codecCorsOrigins: string[];
  workerMetricsPort: number;
  contentRetentionSeconds: number;
  /** How often the content retention schedule runs (infra/retention-schedule.ts). */
  contentSweepSeconds: number;
  traceTtlSeconds: number;
  bodyLimitBytes: number;
  documentBodyLimitBytes: number;
  logLevel: (typeof LOG_LEVELS)[number];
  /** `npm start`'s state (PGlite data, generated secrets, dev server database). */
  stateDir: string;
  workflowBundlePath: string | undefined;
  llm: LlmProfile;
  /** Short bookkeeping activities (execution records, error publication). */
  bookkeeping: RetryProfile;
  ingestion: IngestionProfile;
  /** HNSW `ef_search` for vector searches (SR-5). */
  efSearch: number;
  /** Builds of a model's HNSW index after a large load (db/vector-index.ts). */
  indexBuild: { memoryMb: number; parallelWorkers: number };
  /**
   * How long an API replica's search reuses a pipeline or an embedding model it read (a write
   * through the same replica is seen at once; 0: read every time).
   */
  lookupCacheMs: number;
  /** PC-5: how long answers of EXECUTE references stay cached. */
  executeCacheTtlSeconds: number;
  /** PC-9, CH-2: the LLM of prompts without routing when the request names none. */
  defaultLlmId: string | undefined;
  /**
   * Express `trust proxy`: which peers may set X-Forwarded-For (AUTH-6 limits failures per client
   * address): `loopback` (default), a comma-separated list of addresses or subnets, or a hop count.
   */
  trustProxy: string | number;
  /**
   * The API process also runs a worker on the task queue, on one shared Temporal connection, and
   * starts workflows eagerly (the first workflow task without a dispatch through the server).
   */
  apiRunsWorker: boolean;
  /** Concurrent workflow-task polls of a worker (1 measured fastest on 2 cores). */
  workflowTaskPolls: number;
  /**
   * Slots of a worker process (docs/operations.md, "Sizing a worker"): model streams on the
   * execution task queue, the other activities (ingestion, chains' steps, retention) on its
   * `-tasks` queue, so that neither starves the other; cached workflows (by default one per
   * model stream and a margin: a workflow waits in the cache while its model streams).
   */
  workerSlots: { modelStreams: number; tasks: number; cachedWorkflows: number };
  /** The queues a worker process serves, its shutdown grace, probes and versioning. */
  worker: WorkerSettings;
  /**
   * Each process migrates the database at start (else it only checks that the schema is current:
   * the migrations run as their own command, `node dist/migrate.js`, e.g. a Kubernetes Job).
   */
  migrateOnStart: boolean;
  /** Deltas arriving within this many ms of the last relayed one go out as one relay event. */
  relayBatchMs: number;
  /** SPEC §18 request limits (AGENTRY_LIMIT_*). */
  limits: Limits;
  /**
   * The WebSocket mode of /v1/responses (SPEC OR-5): a connection's lifetime (then
   * `websocket_connection_limit_reached`, as the specification's 60 minutes) and its ping interval.
   */
  webSocket: { limitSeconds: number; pingSeconds: number };
}

export function loadConfig(env: Env = process.env): Config {
  const r = new Reader(env);
  const config = read(r);
  if (r.errors.length > 0) throw new ConfigError(r.errors);
  return config;
}

/** Every setting the configuration reads, with its default (for the documentation check). */
export function settingsRead(): SettingRead[] {
  const r = new Reader({});
  read(r);
  return [...r.settings.values()];
}

function read(r: Reader): Config {
  const applicationSecret = r.str('AGENTRY_APPLICATION_SECRET');
  const applicationSecretPrevious = r.str('AGENTRY_APPLICATION_SECRET_PREVIOUS');
  for (const [name, value] of [
    ['AGENTRY_APPLICATION_SECRET', applicationSecret],
    ['AGENTRY_APPLICATION_SECRET_PREVIOUS', applicationSecretPrevious],
  ] as const) {
    if (value !== undefined && Buffer.byteLength(value) < 32)
      r.errors.push(`${name} must be at least 32 bytes`);
  }
  const adminKeyId = r.str('AGENTRY_ADMIN_KEY_ID');
  const adminKeySecret = r.str('AGENTRY_ADMIN_KEY_SECRET');
  if ((adminKeyId === undefined) !== (adminKeySecret === undefined)) {
    r.errors.push('AGENTRY_ADMIN_KEY_ID and AGENTRY_ADMIN_KEY_SECRET must be set together');
  }
  // Key ids are UUIDs (SPEC §1): any other value would fail at the database on startup.
  if (adminKeyId !== undefined && !isUuid(adminKeyId)) {
    r.errors.push(`AGENTRY_ADMIN_KEY_ID must be a UUID (got "${adminKeyId}")`);
  }
  const bodyLimitBytes = r.int('AGENTRY_BODY_LIMIT_BYTES', 1024 * 1024, 1024);
  const databaseUrl = r.str('DATABASE_URL');
  if (databaseUrl) checkDatabaseTls(databaseUrl, r.errors);
  const redisUrl = r.str('REDIS_URL');
  return {
    port: r.int('PORT', 8080, 0, 65535),
    host: r.str('HOST', '0.0.0.0'),
    databaseUrl,
    dbPoolMax: r.int('AGENTRY_DB_POOL_MAX', 10, 1, 1000),
    redisUrl,
    redisCa: readRedisCa(r, redisUrl),
    redisPrefix: r.str('AGENTRY_REDIS_PREFIX', 'agentry:'),
    temporal: readTemporalSettings(r),
    taskQueue: r.str('AGENTRY_TASK_QUEUE', 'agentry'),
    applicationSecret,
    applicationSecretPrevious,
    adminKeyId,
    adminKeySecret,
    authFailureLimit: r.int('AGENTRY_AUTH_FAILURE_LIMIT', 20, 1),
    authFailureWindowSeconds: r.int('AGENTRY_AUTH_FAILURE_WINDOW_SECONDS', 60, 1),
    codecCorsOrigins: r
      .str('AGENTRY_CODEC_CORS_ORIGINS', '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    workerMetricsPort: r.int('AGENTRY_WORKER_METRICS_PORT', 9464, 0, 65535),
    contentRetentionSeconds: r.int('AGENTRY_CONTENT_RETENTION', 3600, 1),
    contentSweepSeconds: r.int('AGENTRY_CONTENT_SWEEP_SECONDS', 60, 1, 86_400),
    traceTtlSeconds: r.int('AGENTRY_TRACE_TTL', 3600, 1),
    bodyLimitBytes,
    documentBodyLimitBytes: r.int('AGENTRY_DOCUMENT_BODY_LIMIT_BYTES', 12 * 1024 * 1024, 1024),
    logLevel: r.oneOf('AGENTRY_LOG_LEVEL', LOG_LEVELS, 'info'),
    stateDir: r.str('AGENTRY_STATE_DIR', '.agentry'),
    apiRunsWorker: r.bool('AGENTRY_API_RUNS_WORKER', false),
    workflowTaskPolls: r.int('AGENTRY_WORKFLOW_TASK_POLLS', 1, 1, 100),
    workerSlots: workerSlots(r),
    worker: readWorkerSettings(r),
    migrateOnStart: r.bool('AGENTRY_MIGRATE_ON_START', true),
    relayBatchMs: r.int('AGENTRY_RELAY_BATCH_MS', 30, 0, 1000),
    workflowBundlePath: r.str('AGENTRY_WORKFLOW_BUNDLE'),
    llm: {
      startToCloseMs: r.int('AGENTRY_LLM_START_TO_CLOSE_MS', 600_000, 1),
      heartbeatTimeoutMs: r.int('AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS', 20_000, 1),
      noProgressMs: r.int('AGENTRY_LLM_NO_PROGRESS_MS', 120_000, 1),
      maximumAttempts: r.int('AGENTRY_LLM_MAX_ATTEMPTS', 4, 1),
      initialIntervalMs: r.int('AGENTRY_LLM_RETRY_INITIAL_MS', 1000, 1),
      backoffCoefficient: r.num('AGENTRY_LLM_RETRY_BACKOFF', 2, 1),
      maximumIntervalMs: r.int('AGENTRY_LLM_RETRY_MAX_INTERVAL_MS', 30_000, 1),
    },
    efSearch: r.int('AGENTRY_HNSW_EF_SEARCH', 400, 1, 1000),
    indexBuild: {
      memoryMb: r.int('AGENTRY_INDEX_BUILD_MEMORY_MB', 512, 64, 1_048_576),
      parallelWorkers: r.int('AGENTRY_INDEX_BUILD_WORKERS', 2, 0, 64),
    },
    lookupCacheMs: r.int('AGENTRY_LOOKUP_CACHE_MS', LOOKUP_CACHE_TTL_MS, 0, 60_000),
    executeCacheTtlSeconds: r.int('AGENTRY_EXECUTE_CACHE_TTL', 300, 1),
    defaultLlmId: r.uuid('AGENTRY_DEFAULT_LLM_ID'),
    trustProxy: trustProxyOf(r.str('AGENTRY_TRUST_PROXY')),
    ingestion: {
      startToCloseMs: r.int('AGENTRY_INGESTION_START_TO_CLOSE_MS', 60_000, 1),
      heartbeatTimeoutMs: r.int('AGENTRY_INGESTION_HEARTBEAT_TIMEOUT_MS', 20_000, 1),
      maximumAttempts: r.int('AGENTRY_INGESTION_MAX_ATTEMPTS', 10, 1),
      initialIntervalMs: r.int('AGENTRY_INGESTION_RETRY_INITIAL_MS', 1000, 1),
      backoffCoefficient: 2,
      maximumIntervalMs: r.int('AGENTRY_INGESTION_RETRY_MAX_INTERVAL_MS', 30_000, 1),
      batchSize: r.int('AGENTRY_INGESTION_BATCH_SIZE', 256, 1, 10_000),
      parallelism: r.int('AGENTRY_INGESTION_PARALLELISM', 2, 1, 32),
    },
    bookkeeping: {
      startToCloseMs: r.int('AGENTRY_BOOKKEEPING_START_TO_CLOSE_MS', 10_000, 1),
      maximumAttempts: r.int('AGENTRY_BOOKKEEPING_MAX_ATTEMPTS', 10, 1),
      initialIntervalMs: r.int('AGENTRY_BOOKKEEPING_RETRY_INITIAL_MS', 200, 1),
      backoffCoefficient: 2,
      maximumIntervalMs: 5_000,
    },
    limits: readLimits(r, bodyLimitBytes),
    webSocket: {
      limitSeconds: r.int('AGENTRY_WEBSOCKET_LIMIT_SECONDS', 3600, 1, 86_400),
      pingSeconds: r.int('AGENTRY_WEBSOCKET_PING_SECONDS', 30, 1, 3600),
    },
  };
}

/** Cached workflows beyond one per model stream: those running their steps or ingesting. */
const CACHE_MARGIN = 100;

function workerSlots(r: Reader): Config['workerSlots'] {
  const modelStreams = r.int('AGENTRY_WORKER_MODEL_STREAMS', 1000, 1, 100_000);
  return {
    modelStreams,
    tasks: r.int('AGENTRY_WORKER_TASK_SLOTS', 100, 1, 10_000),
    cachedWorkflows: r.int('AGENTRY_WORKER_CACHED_WORKFLOWS', modelStreams + CACHE_MARGIN, 1, 1_000_000),
  };
}

const MIB = 1024 * 1024;

/** SPEC §18: each limit's default and the range that still makes sense. */
function readLimits(r: Reader, bodyLimitBytes: number): Limits {
  const d = DEFAULT_LIMITS;
  const limits: Limits = {
    templateBytes: r.int('AGENTRY_LIMIT_TEMPLATE_BYTES', d.templateBytes, 1024, 64 * MIB),
    renderedPromptBytes: r.int('AGENTRY_LIMIT_RENDERED_PROMPT_BYTES', d.renderedPromptBytes, 1024, 256 * MIB),
    agentMessages: r.int('AGENTRY_LIMIT_AGENT_MESSAGES', d.agentMessages, 1, 1000),
    agentPlaceholders: r.int('AGENTRY_LIMIT_AGENT_PLACEHOLDERS', d.agentPlaceholders, 1, 1000),
    k: r.int('AGENTRY_LIMIT_K', d.k, 1, 1000),
    fragmentChars: r.int('AGENTRY_LIMIT_FRAGMENT_CHARS', d.fragmentChars, 100, 100_000),
    filterDepth: r.int('AGENTRY_LIMIT_FILTER_DEPTH', d.filterDepth, 1, 32),
    documentsPerBatch: r.int('AGENTRY_LIMIT_DOCUMENTS_PER_BATCH', d.documentsPerBatch, 1, 10_000),
    chainDepth: r.int('AGENTRY_LIMIT_CHAIN_DEPTH', d.chainDepth, 1, 10),
    chainSteps: r.int('AGENTRY_LIMIT_CHAIN_STEPS', d.chainSteps, 1, 1000),
  };
  // A template travels in a request body: a larger template limit could never be reached.
  if (limits.templateBytes > bodyLimitBytes)
    r.errors.push(
      `AGENTRY_LIMIT_TEMPLATE_BYTES (${limits.templateBytes}) must not exceed AGENTRY_BODY_LIMIT_BYTES (${bodyLimitBytes})`,
    );
  return limits;
}

/**
 * DATABASE_URL's TLS files (libpq's `sslrootcert`, `sslcert`, `sslkey`, which node-postgres reads
 * when it connects): readable and sound now, so a wrong one names itself at start-up.
 */
function checkDatabaseTls(url: string, problems: string[]): void {
  let params: URLSearchParams;
  try {
    params = new URL(url).searchParams;
  } catch {
    problems.push('DATABASE_URL is not a URL (postgres://user:pass@host:5432/db)');
    return;
  }
  const file = (name: string): Pem | undefined => {
    const path = params.get(name);
    return path ? readPem(`DATABASE_URL's ${name}`, path, problems) : undefined;
  };
  const ca = file('sslrootcert');
  if (ca) checkCertificates(ca, 'the CA that signed the server certificate', problems);
  const cert = file('sslcert');
  const key = file('sslkey');
  if (cert && key) checkKeyPair(cert, key, problems);
  else if (params.has('sslcert') !== params.has('sslkey'))
    problems.push("DATABASE_URL's sslcert and sslkey must be given together");
}

/** AGENTRY_REDIS_TLS_CA_PATH: only with `rediss://`, a readable bundle of sound certificates. */
function readRedisCa(r: Reader, redisUrl: string | undefined): string | undefined {
  const path = r.str('AGENTRY_REDIS_TLS_CA_PATH');
  if (path === undefined) return undefined;
  if (!redisUrl?.startsWith('rediss://')) {
    r.errors.push('AGENTRY_REDIS_TLS_CA_PATH needs a rediss:// REDIS_URL (TLS)');
    return undefined;
  }
  const ca = readPem('AGENTRY_REDIS_TLS_CA_PATH', path, r.errors);
  if (ca) checkCertificates(ca, 'the CA that signed the Redis server certificate', r.errors);
  return ca?.pem;
}

function trustProxyOf(value: string | undefined): string | number {
  if (value === undefined) return 'loopback';
  return /^\d+$/.test(value) ? Number(value) : value;
}

/** Production processes (api, worker) need every service named explicitly. */
export function requireProductionSettings(config: Config): void {
  const missing: string[] = [];
  if (!config.databaseUrl) missing.push('DATABASE_URL is required (postgres://user:pass@host:5432/db)');
  if (!config.redisUrl) missing.push('REDIS_URL is required (redis://host:6379)');
  if (!config.temporal.address)
    missing.push(
      'TEMPORAL_ADDRESS is required (host:7233), or a profile of TEMPORAL_CONFIG_FILE with an address',
    );
  if (!config.applicationSecret) missing.push('AGENTRY_APPLICATION_SECRET is required (≥ 32 bytes)');
  if (missing.length > 0) throw new ConfigError(missing);
}
