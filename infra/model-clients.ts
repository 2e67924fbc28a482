// One OpenAI client per LLM endpoint and key, kept between calls: a client per attempt would
// build its options and, against a TLS endpoint, open a new connection (a handshake) each time.
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import OpenAI from 'openai';
import { fetchWholeEvents } from './sse-event-chunks';

/** Clients kept; the least recently used is dropped past this (LLMs are few). */
const MAX_CLIENTS = 256;

export class ModelClients {
  private readonly clients = new LRUCache<string, OpenAI>({ max: MAX_CLIENTS });
  /** The client of a connection object (the LLM store returns one per version of an LLM). */
  private readonly byConnection = new WeakMap<object, OpenAI>();

  /** The client of an LLM's connection, found without hashing while the object is the same. */
  of(connection: { endpoint: string; apiKey: string }): OpenAI {
    let client = this.byConnection.get(connection);
    if (!client) {
      client = this.get(connection.endpoint, connection.apiKey);
      this.byConnection.set(connection, client);
    }
    return client;
  }

  get(endpoint: string, apiKey: string): OpenAI {
    // The key is hashed so that the map's keys never hold the secret itself.
    const id = createHash('sha256').update(endpoint).update('\0').update(apiKey).digest('base64');
    let client = this.clients.get(id);
    if (!client) {
      // Retries are Temporal's (LLM-3); the no-progress timer and cancellation end a call.
      client = new OpenAI({
        apiKey,
        baseURL: endpoint,
        maxRetries: 0,
        timeout: 24 * 3600_000,
        fetch: fetchWholeEvents,
      });
      this.clients.set(id, client);
    }
    return client;
  }
}
