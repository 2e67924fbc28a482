// PV-2: the clock of `{{foundationallm:current_datetime_utc}}`, identical on retries and replays.
// A child execution receives its parent's, so a whole tree of references renders one instant.
import { workflowInfo } from '@temporalio/workflow';

/** The given clock, or the start time of this workflow run. */
export const clockOf = (nowMs: number | undefined): number => nowMs ?? workflowInfo().startTime.getTime();
