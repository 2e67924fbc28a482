// The pub/sub of the streams floor: Redis (PUBLISH / SUBSCRIBE on the benchmark's redis-server)
// between the floor's API and worker processes, or an EventEmitter when both run in one process
// (the embedded variant). Messages are NDJSON lines without their newline.
import { EventEmitter } from 'node:events';
import { createClient } from 'redis';

export interface Bus {
  /** Resolves once the subscription is in place; the result unsubscribes. */
  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>;
  publish(channel: string, message: string): Promise<void>;
  close(): Promise<void>;
}

/** The terminal messages the API ends a response on. */
export const DONE = '{"type":"done"}';
export const ERROR_PREFIX = '{"type":"error"';

export function memoryBus(): Bus {
  const emitter = new EventEmitter().setMaxListeners(0);
  return {
    subscribe: async (channel, listener) => {
      emitter.on(channel, listener);
      return async () => void emitter.off(channel, listener);
    },
    publish: async (channel, message) => void emitter.emit(channel, message),
    close: async () => void emitter.removeAllListeners(),
  };
}

/** A Redis bus: one connection publishes, another (opened on the first subscribe) subscribes. */
export async function redisBus(url: string): Promise<Bus> {
  const publisher = createClient({ url });
  publisher.on('error', (err: Error) => console.error(`floor redis: ${err.message}`));
  await publisher.connect();
  let subscriber: ReturnType<typeof publisher.duplicate> | undefined;
  let connecting: Promise<unknown> | undefined;
  return {
    async subscribe(channel, listener) {
      if (!subscriber) {
        subscriber = publisher.duplicate();
        subscriber.on('error', (err: Error) => console.error(`floor redis: ${err.message}`));
        connecting = subscriber.connect();
      }
      await connecting;
      const sub = subscriber;
      await sub.subscribe(channel, listener);
      return async () => void (await sub.unsubscribe(channel, listener));
    },
    publish: async (channel, message) => void (await publisher.publish(channel, message)),
    async close() {
      await Promise.all([publisher, subscriber].map((c) => c?.close()));
    },
  };
}
