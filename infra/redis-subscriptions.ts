// One Redis pub/sub connection per process for every channel it listens to: the relay's channel
// per followed execution (infra/redis-relay.ts) and the model streams' stop notices
// (infra/stop-notices.ts). A channel is subscribed while it has a listener, so a new one costs one
// SUBSCRIBE and a message one delivery, whatever the number of channels. Pub/sub keeps nothing:
// after a reconnection (node-redis subscribes again before it says 'ready') every listener is told,
// so that it can read what it may have missed from where it is kept.
//
// A channel whose last listener leaves stays known until its SUBSCRIBE has settled, and is
// unsubscribed only if nobody joined meanwhile: a reader that closes before its subscription is
// confirmed must not unsubscribe the channel a re-attaching reader has just joined (issue 33; the
// connection holds one subscription per channel, whoever asked for it).
import type { Logger } from './logger';
import { answered, outlastingOutage, watchConnection, type RedisClient } from './redis-client';

interface ChannelListener {
  message(message: string): void;
  /** The connection was lost and is back: messages may have been missed meanwhile. */
  reconnected(): void;
}

interface Channel {
  listeners: Set<ChannelListener>;
  subscribed: Promise<void>;
}

export class RedisSubscriptions {
  private readonly channels = new Map<string, Channel>();
  private connection: { client: RedisClient; ready: Promise<unknown> } | undefined;
  private closed = false;

  constructor(
    private readonly client: RedisClient,
    private readonly logger: Logger,
    private readonly outageToleranceMs: number,
  ) {}

  /** Resolves once `listener` gets every message published to `channel` from now on. */
  async add(channel: string, listener: ChannelListener): Promise<void> {
    let entry = this.channels.get(channel);
    if (!entry) {
      entry = { listeners: new Set(), subscribed: this.subscribe(channel) };
      this.channels.set(channel, entry);
      entry.subscribed.catch(() => {
        if (this.channels.get(channel) === entry) this.channels.delete(channel);
      });
    }
    entry.listeners.add(listener);
    await entry.subscribed;
  }

  remove(channel: string, listener: ChannelListener): void {
    const entry = this.channels.get(channel);
    if (!entry?.listeners.delete(listener) || entry.listeners.size > 0) return;
    void entry.subscribed.then(
      () => {
        // Joined again meanwhile, or already replaced: the subscription is someone's.
        if (entry.listeners.size > 0 || this.channels.get(channel) !== entry) return;
        this.channels.delete(channel);
        const conn = this.connection;
        if (conn && !this.closed) conn.client.unsubscribe(channel, this.onMessage).catch(() => undefined);
      },
      () => undefined, // never subscribed: add() dropped the channel
    );
  }

  /** Channels followed (for tests and metrics). */
  get size(): number {
    return this.channels.size;
  }

  private readonly onMessage = (message: string, channel: string): void => {
    const entry = this.channels.get(channel);
    if (entry) for (const listener of entry.listeners) listener.message(message);
  };

  private async subscribe(channel: string): Promise<void> {
    await outlastingOutage(() => this.subscribeOnce(channel), this.outageToleranceMs);
  }

  /**
   * One SUBSCRIBE (and the connection's start), bounded like any reply (`answered`): one that
   * comes after that is undone unless the channel is wanted again.
   */
  private async subscribeOnce(channel: string): Promise<void> {
    const subscribing = this.subscriber().then(async (client) => {
      await client.subscribe(channel, this.onMessage);
      return client;
    });
    try {
      await answered(subscribing);
    } catch (err) {
      subscribing
        .then((client) =>
          this.channels.has(channel) ? undefined : client.unsubscribe(channel, this.onMessage),
        )
        .catch(() => undefined);
      throw err;
    }
  }

  private async subscriber(): Promise<RedisClient> {
    if (this.closed) throw new Error('relay closed');
    if (!this.connection) {
      // Named after the shared client, so that CLIENT LIST shows whose subscriber it is.
      const name = `${this.client.options?.name ?? 'agentry'}:subscriber`;
      const client = watchConnection(this.client.duplicate({ name }), this.logger, 'subscriber');
      let lost = false;
      client.on('error', () => (lost = true));
      client.on('ready', () => {
        if (!lost) return;
        lost = false;
        for (const entry of this.channels.values()) for (const l of entry.listeners) l.reconnected();
      });
      this.connection = { client, ready: client.connect() };
    }
    await this.connection.ready;
    return this.connection.client;
  }

  close(): void {
    this.closed = true;
    this.channels.clear();
    this.connection?.client.destroy();
    this.connection = undefined;
  }
}
