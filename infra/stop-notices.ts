// Stop notices for model streams (SPEC §15 DX-3): when an execution is cancelled, its workflow
// sends the execution's id here, and every worker process that runs one of its model streams
// stops it at once. One subscription per process carries them all, so a running stream costs
// nothing while nobody cancels; Temporal's own cancellation, which reaches an activity only with
// its next heartbeat response, stays the fallback. Ids only, never content.
import { EventEmitter } from 'node:events';
import type { RedisClient } from './redis-client';
import type { RedisSubscriptions } from './redis-subscriptions';

export interface StopNotices {
  /** Tells every process that the execution's model streams must stop. */
  send(executionId: string): Promise<void>;
  /** Calls `onStop` with each execution told to stop, until the returned function is called. */
  listen(onStop: (executionId: string) => void): Promise<() => void>;
}

/** The channel on Redis: one per deployment (its key prefix). */
const stopChannel = (prefix: string): string => `${prefix}model-stream-stops`;

export class RedisStopNotices implements StopNotices {
  private readonly channel: string;

  constructor(
    private readonly redis: RedisClient,
    private readonly subscriptions: RedisSubscriptions,
    prefix: string,
  ) {
    this.channel = stopChannel(prefix);
  }

  async send(executionId: string): Promise<void> {
    await this.redis.publish(this.channel, executionId);
  }

  async listen(onStop: (executionId: string) => void): Promise<() => void> {
    const listener = { message: onStop, reconnected: () => undefined };
    await this.subscriptions.add(this.channel, listener);
    return () => this.subscriptions.remove(this.channel, listener);
  }
}

/** The embedded quick start's: one process, so an event. */
export class MemoryStopNotices implements StopNotices {
  private readonly events = new EventEmitter().setMaxListeners(0);

  async send(executionId: string): Promise<void> {
    this.events.emit('stop', executionId);
  }

  async listen(onStop: (executionId: string) => void): Promise<() => void> {
    this.events.on('stop', onStop);
    return () => this.events.off('stop', onStop);
  }
}
