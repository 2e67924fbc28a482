// What the model activity writes to an execution's relay and reads back from it: an event
// published, or the log so far (for a retry that ends or resumes the stream). Redis out of reach
// is one retryable failure for Temporal (Infra.Unavailable), whatever the client's error was.
import { ApplicationFailure } from '@temporalio/common';
import type { RelayEvent } from '../domain/stream-events';
import { RELAY_START, type Relay } from '../infra/relay';
import { FailureType } from '../workflows/contracts';

const relayUnavailable = (): ApplicationFailure =>
  ApplicationFailure.create({ type: FailureType.InfraUnavailable, message: 'Relay unavailable' });

export function relayWriter(relay: Relay) {
  return {
    async publish(executionId: string, event: RelayEvent): Promise<void> {
      try {
        await relay.publish(executionId, event);
      } catch {
        throw relayUnavailable();
      }
    },
    /** Every event the relay holds for the execution, in order. */
    readLog(executionId: string): Promise<RelayEvent[]> {
      return relay.read(executionId, RELAY_START).then(
        (log) => log.map((entry) => entry.event),
        () => {
          throw relayUnavailable();
        },
      );
    },
  };
}
