// The relay on Redis (SPEC §9.6): one stream per execution holds the encrypted entries for
// replay (late and re-attaching readers, a retry reading what its execution's readers saw), and
// each append is also published on a channel of the same name for the readers following it
// (infra/redis-subscriptions.ts), as `<previous id> <id> <data>`. One script appends, sets the expiry when due and publishes, so
// an entry is never delivered without being stored, nor stored without being delivered to the
// readers subscribed at that moment; a reader subscribes before it reads what is stored.
import { createHash } from 'node:crypto';
import { ErrorReply } from 'redis';
import { isTerminal, type RelayEvent } from '../domain/stream-events';
import type { KeyRing } from './crypto';
import type { Logger } from './logger';
import { outlastingOutage, type RedisClient } from './redis-client';
import { RelayExpiry } from './relay-expiry';
import { compareEntryIds, EntryQueue, relayKey, type Relay, type RelayEntry, type RelayFeed } from './relay';
import { RedisSubscriptions } from './redis-subscriptions';

/** How long a publish or read waits for an unreachable Redis (a restart) before it fails. */
export const REDIS_OUTAGE_TOLERANCE_MS = 30_000;
/** A retried append looks for its own entry among the stream's last entries. */
const RESENT_LOOKBACK = 100;

/** KEYS[1] the stream (and channel); ARGV[1] the entry, ARGV[2] the expiry in ms or 0. */
const APPEND = `
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
local previous = '0'
if #last > 0 then previous = last[1][1] end
local id = redis.call('XADD', KEYS[1], '*', 'd', ARGV[1])
if ARGV[2] ~= '0' then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
redis.call('PUBLISH', KEYS[1], previous .. ' ' .. id .. ' ' .. ARGV[1])
return id`;
const APPEND_SHA = createHash('sha1').update(APPEND).digest('hex');

/** A published entry, with the id of the entry before it in the stream. */
interface RelayMessage {
  previousId: string;
  id: string;
  data: string;
}

function parseMessage(message: string): RelayMessage | undefined {
  const first = message.indexOf(' ');
  const second = message.indexOf(' ', first + 1);
  if (first < 0 || second < 0) return undefined;
  return {
    previousId: message.slice(0, first),
    id: message.slice(first + 1, second),
    data: message.slice(second + 1),
  };
}

type XReadReply = { name: string; messages: { id: string; message: Record<string, string> }[] }[] | null;

export class RedisRelay implements Relay {
  private readonly expiry = new RelayExpiry();
  /** Closed with the relay when it made them. */
  private readonly own: boolean;
  private readonly subscriptions: RedisSubscriptions;

  constructor(
    private readonly redis: RedisClient,
    private readonly keyring: KeyRing,
    private readonly prefix: string,
    logger: Logger,
    private readonly outageToleranceMs = REDIS_OUTAGE_TOLERANCE_MS,
    /** The process's subscriber connection, when other listeners share it. */
    subscriptions?: RedisSubscriptions,
  ) {
    this.own = subscriptions === undefined;
    this.subscriptions = subscriptions ?? new RedisSubscriptions(redis, logger, outageToleranceMs);
  }

  async publish(executionId: string, event: RelayEvent): Promise<string> {
    const key = relayKey(this.prefix, executionId);
    // Unique (random IV): a retried append can tell whether its lost reply hid a stored entry.
    const data = this.keyring.encryptJson('relay', event).toString('base64');
    const terminal = isTerminal(event);
    const ttlMs = this.expiry.due(executionId, terminal);
    const args = { keys: [key], arguments: [data, String(ttlMs ?? 0)] };
    // A Redis restart must cost neither a model call nor the client's stream.
    const id = await outlastingOutage(async (again) => {
      if (again) {
        const tail = await this.redis.xRevRange(key, '+', '-', { COUNT: RESENT_LOOKBACK });
        const stored = (tail ?? []).find((entry) => entry.message.d === data);
        if (stored) return stored.id;
      }
      try {
        return String(await this.redis.evalSha(APPEND_SHA, args));
      } catch (err) {
        if (!(err instanceof ErrorReply && err.message.startsWith('NOSCRIPT'))) throw err;
        return String(await this.redis.eval(APPEND, args));
      }
    }, this.outageToleranceMs);
    if (ttlMs !== undefined) this.expiry.set(executionId, terminal);
    return id;
  }

  async read(executionId: string, afterId: string): Promise<RelayEntry[]> {
    return (await this.stored(relayKey(this.prefix, executionId), afterId)).map(({ id, data }) => ({
      id,
      event: this.decode(data),
    }));
  }

  follow(executionId: string, afterId: string): RelayFeed {
    return new RedisFeed(this, this.subscriptions, relayKey(this.prefix, executionId), afterId);
  }

  async delete(executionId: string): Promise<void> {
    await outlastingOutage(() => this.redis.del(relayKey(this.prefix, executionId)), this.outageToleranceMs);
  }

  /** The stream's entries after `afterId`, still encrypted. */
  async stored(key: string, afterId: string): Promise<{ id: string; data: string }[]> {
    const reply = (await outlastingOutage(
      () => this.redis.xRead({ key, id: afterId }),
      this.outageToleranceMs,
    )) as XReadReply;
    return (reply ?? []).flatMap(({ messages }) =>
      messages.map((m) => ({ id: m.id, data: m.message.d ?? '' })),
    );
  }

  decode(data: string): RelayEvent {
    return this.keyring.decryptJson<RelayEvent>('relay', Buffer.from(data, 'base64'));
  }

  async close(): Promise<void> {
    if (this.own) this.subscriptions.close();
  }
}

/**
 * A reader's feed: subscribed first, then what the stream holds after its position, then each
 * published entry that follows the last one it has. A message whose previous id is not that
 * last one (some were missed) or a reconnection has it read the stream again from there.
 */
class RedisFeed extends EntryQueue {
  private last: string;
  /** Messages that arrived while the stream was being read; applied after it. */
  private held: RelayMessage[] | undefined = [];

  constructor(
    private readonly relay: RedisRelay,
    private readonly subscriptions: RedisSubscriptions,
    private readonly key: string,
    afterId: string,
  ) {
    super(() => subscriptions.remove(key, this.listener));
    this.last = afterId;
    subscriptions.add(key, this.listener).then(
      () => this.catchUp(),
      (err: unknown) => this.fail(err),
    );
  }

  /** A reconnection during a read: that read may have missed what the reconnection lost. */
  private readAgain = false;

  private readonly listener = {
    message: (text: string) => {
      const message = parseMessage(text);
      if (message) this.offer(message);
    },
    reconnected: () => {
      if (this.held) this.readAgain = true;
      else {
        this.held = [];
        void this.catchUp();
      }
    },
  };

  private offer(message: RelayMessage): void {
    if (this.held) {
      this.held.push(message);
      return;
    }
    if (compareEntryIds(message.id, this.last) <= 0) return;
    if (message.previousId !== this.last) {
      this.held = [message];
      void this.catchUp();
      return;
    }
    this.last = message.id;
    this.push([{ id: message.id, event: this.relay.decode(message.data) }]);
  }

  /** Reads the stream after the last entry, then applies the messages held meanwhile. */
  private async catchUp(): Promise<void> {
    try {
      const stored = await this.relay.stored(this.key, this.last);
      if (stored.length > 0) {
        this.last = stored[stored.length - 1]!.id;
        this.push(stored.map(({ id, data }) => ({ id, event: this.relay.decode(data) })));
      }
    } catch (err) {
      this.fail(err);
    }
    if (this.readAgain) {
      this.readAgain = false;
      return this.catchUp();
    }
    const held = this.held ?? [];
    this.held = undefined;
    for (const message of held) this.offer(message);
  }
}
