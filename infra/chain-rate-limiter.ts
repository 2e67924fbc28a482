// CH-4 `guardrails.rateLimitPerMinute`: executions admitted per chain in a fixed 60 s window (so up to
// twice the limit can pass across a window boundary), shared by every API replica through Redis
// (rate-limiter-flexible), in memory for the quick start.
// A chain's limit is fixed when it is stored, so one limiter per distinct limit suffices.
import type { RedisClient } from './redis-client';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { Unavailable } from '../domain/errors';

export interface ChainRateLimiter {
  /** Takes one execution of the chain's minute: null when admitted, else seconds to wait. */
  take(chainId: string, perMinute: number): Promise<number | null>;
  /** Gives back an execution that was admitted but did not start. */
  giveBack(chainId: string, perMinute: number): Promise<void>;
}

export function createChainRateLimiter(redis: RedisClient | undefined, prefix: string): ChainRateLimiter {
  const limiters = new Map<number, RateLimiterAbstract>();
  const limiterFor = (points: number): RateLimiterAbstract => {
    let limiter = limiters.get(points);
    if (!limiter) {
      const options = { keyPrefix: `${prefix}chain-rate-${points}`, points, duration: 60 };
      limiter = redis
        ? new RateLimiterRedis({ ...options, storeClient: redis, useRedisPackage: true })
        : new RateLimiterMemory(options);
      limiters.set(points, limiter);
    }
    return limiter;
  };
  return {
    async take(chainId, perMinute) {
      try {
        await limiterFor(perMinute).consume(chainId);
        return null;
      } catch (err) {
        if (err instanceof RateLimiterRes) return Math.max(1, Math.ceil(err.msBeforeNext / 1000));
        throw new Unavailable('Chain rate limits are unavailable: Redis is unreachable');
      }
    },
    async giveBack(chainId, perMinute) {
      await limiterFor(perMinute)
        .reward(chainId)
        .catch(() => undefined);
    },
  };
}
