// A configured retry profile as a Temporal retry policy; failure types of contracts.ts that must
// not be retried are never retried, whatever the profile.
import type { RetryPolicy } from '@temporalio/common';
import { NON_RETRYABLE, type RetryProfile } from './contracts';

export function retryPolicy(p: RetryProfile): RetryPolicy {
  return {
    maximumAttempts: p.maximumAttempts,
    initialInterval: p.initialIntervalMs,
    backoffCoefficient: p.backoffCoefficient,
    maximumInterval: p.maximumIntervalMs,
    nonRetryableErrorTypes: [...NON_RETRYABLE],
  };
}
