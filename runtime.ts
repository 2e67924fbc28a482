// Shared construction for the composition roots (api/server.ts, worker.ts, embedded.ts): the
// services both processes use, built from configuration in one place.
import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { failureConverterPath } from './infra/failure-converter';
import { Counter, Registry } from 'prom-client';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';
import { createKnex, databaseStartError, migrate, type Knex } from './db/knex';
import { requireMigrated } from './db/migration-status';
import { createStores, type Stores } from './db/stores';
import { startLexemeReindex } from './db/lexeme-reindex';
import { createChainRateLimiter, type ChainRateLimiter } from './infra/chain-rate-limiter';
import {
  createIdempotencyStore,
  type IdempotencyStore,
  type LeasedIdempotencyStore,
} from './infra/idempotency-store';
import { MemoryExecuteCache, RedisExecuteCache, type ExecuteCache } from './infra/execute-cache';
import type { Config } from './infra/config';
import type { Limits } from './domain/limits';
import { KeyRing } from './infra/crypto';
import { temporalClientInterceptors } from './infra/telemetry';
import type { Logger } from './infra/logger';
import { EncryptionCodec } from './infra/payload-codec';
import { MemoryRelay } from './infra/memory-relay';
import { connectRedis, type RedisClient } from './infra/redis-client';
import { connectTemporal } from './infra/temporal-connection';
import { REDIS_OUTAGE_TOLERANCE_MS, RedisRelay } from './infra/redis-relay';
import { RedisSubscriptions } from './infra/redis-subscriptions';
import type { Relay } from './infra/relay';
import { MemoryStopNotices, RedisStopNotices, type StopNotices } from './infra/stop-notices';
import { MemoryTraceStore, RedisTraceStore, type TraceStore } from './infra/trace-store';
import type { ExecutionProfiles, IngestionProfile } from './workflows/contracts';

export interface Runtime extends Stores {
  config: Config;
  logger: Logger;
  keyring: KeyRing;
  codec: EncryptionCodec;
  db: Knex;
  redis: RedisClient | undefined;
  relay: Relay;
  /** DX-3: a cancelled execution's model streams stop at once, in whichever process they run. */
  stopNotices: StopNotices;
  traces: TraceStore;
  failureLimiter: RateLimiterAbstract;
  chainRateLimiter: ChainRateLimiter;
  idempotency: LeasedIdempotencyStore;
  /** Which attempt streams each execution's answer (activities/model-stream-claim.ts). */
  modelStreams: IdempotencyStore;
  executeCache: ExecuteCache;
  profiles: ExecutionProfiles;
  ingestion: IngestionProfile;
  /** SPEC §18 limits, handed to the routes and activities that enforce them. */
  limits: Limits;
  /** Series of what runs in both processes (the start's re-index): served by each one's /metrics. */
  metrics: Registry;
  close(): Promise<void>;
}

export async function createRuntime(config: Config, logger: Logger): Promise<Runtime> {
  if (!config.applicationSecret) throw new Error('AGENTRY_APPLICATION_SECRET is required');
  if (!config.databaseUrl) throw new Error('DATABASE_URL is required');
  const keyring = new KeyRing(config.applicationSecret, config.applicationSecretPrevious);
  const session = { efSearch: config.efSearch };
  const db = createKnex(config.databaseUrl, config.dbPoolMax, session);
  // The first use of DATABASE_URL: a refusal names what to fix in it. With migrations off the
  // replica only checks the schema (db/migration-status.ts).
  await (config.migrateOnStart ? migrate(db) : requireMigrated(db)).catch(async (err: unknown) => {
    await db.destroy();
    throw databaseStartError(err);
  });
  // One shared client; connected before anything uses it (infra/redis-client.ts).
  const redis = config.redisUrl ? await connectRedis(config.redisUrl, logger, config.redisCa) : undefined;
  // One pub/sub connection per process, made when something first listens.
  const subscriptions = redis ? new RedisSubscriptions(redis, logger, REDIS_OUTAGE_TOLERANCE_MS) : undefined;
  const relay: Relay =
    redis && subscriptions
      ? new RedisRelay(redis, keyring, config.redisPrefix, logger, REDIS_OUTAGE_TOLERANCE_MS, subscriptions)
      : new MemoryRelay(keyring);
  const stopNotices: StopNotices =
    redis && subscriptions
      ? new RedisStopNotices(redis, subscriptions, config.redisPrefix)
      : new MemoryStopNotices();
  const traces: TraceStore = redis
    ? new RedisTraceStore(redis, keyring, config.redisPrefix)
    : new MemoryTraceStore(keyring);
  const limiterOptions = {
    keyPrefix: `${config.redisPrefix}auth-failures`,
    points: config.authFailureLimit,
    duration: config.authFailureWindowSeconds,
  };
  const failureLimiter = redis
    ? new RateLimiterRedis({ ...limiterOptions, storeClient: redis, useRedisPackage: true })
    : new RateLimiterMemory(limiterOptions);
  const stores = createStores(db, keyring, session, config.indexBuild, config.lookupCacheMs);
  if (config.adminKeyId && config.adminKeySecret) {
    await stores.apiKeys.ensureAdmin(
      config.adminKeyId.toLowerCase(),
      keyring.hmac('api-key-secret', config.adminKeySecret),
    );
  }
  // Fragments stored before their lexemes were keyed are keyed now, in the background (their
  // full-text matches come back batch by batch; docs/decisions.md, "No words at rest").
  const metrics = new Registry();
  const unreadable = new Counter({
    name: 'agentry_lexeme_reindex_unreadable_total',
    help: 'Fragments the start-up lexeme re-index skipped because their text could not be decrypted',
    registers: [metrics],
  });
  const reindex = startLexemeReindex(db, keyring, stores.documents.lexemes, logger, unreadable);
  return {
    config,
    logger,
    keyring,
    codec: new EncryptionCodec(keyring),
    db,
    redis,
    relay,
    stopNotices,
    traces,
    failureLimiter,
    chainRateLimiter: createChainRateLimiter(redis, config.redisPrefix),
    idempotency: createIdempotencyStore(redis, config.redisPrefix),
    modelStreams: createIdempotencyStore(redis, config.redisPrefix, 'model-stream'),
    ...stores,
    executeCache: redis
      ? new RedisExecuteCache(redis, keyring, config.executeCacheTtlSeconds, config.redisPrefix)
      : new MemoryExecuteCache(keyring, config.executeCacheTtlSeconds),
    profiles: { llm: config.llm, bookkeeping: config.bookkeeping },
    ingestion: config.ingestion,
    limits: config.limits,
    metrics,
    async close() {
      await reindex.stop();
      await relay.close();
      subscriptions?.close();
      await redis?.close();
      await db.destroy();
    },
  };
}

/**
 * Client and worker share this: payloads encrypted by the codec, and failure messages and stack
 * traces moved into an encoded payload too (they are not payloads by default, DX-6).
 */
export function dataConverter(rt: Runtime): DataConverter {
  return { payloadCodecs: [rt.codec], failureConverterPath };
}

/**
 * The API's Temporal client. Given the NativeConnection of a worker in this process, the client
 * shares it, which is what eager workflow start needs (`startApi(..., { eagerStart: true })`);
 * the caller then closes that connection after the worker stopped.
 */
export async function connectTemporalClient(rt: Runtime, shared?: NativeConnection): Promise<Client> {
  const connection = shared ?? (await connectTemporal(rt.config.temporal));
  return new Client({
    connection,
    namespace: rt.config.temporal.namespace,
    dataConverter: { payloadCodecs: [rt.codec] },
    // With tracing on, a workflow start joins the caller's trace (infra/telemetry.ts).
    ...withInterceptors(temporalClientInterceptors()),
  });
}

const withInterceptors = <T>(interceptors: T | undefined) => (interceptors ? { interceptors } : {});
