// The figures of one fault-under-load scenario (test/reliability/faults-under-load.test.ts), as the
// suite appends them, one JSON line per scenario, to AGENTRY_LOAD_FAULTS_RESULTS and
// `npm run bench -- chaos` pools them.
export interface LoadFigures {
  scenario: string;
  /** How long the fault itself took (a process killed and started again, a burner's run). */
  fault_ms: number;
  executions: number;
  /** Streams in flight when the fault struck. */
  affected: number;
  recovery_ms: { p50: number; p99: number; max: number };
  /**
   * The longest wait between two events of one stream from the fault to its end (a stalled
   * event loop shows here: what a heartbeat must outlast).
   */
  longest_gap_ms: number;
  /** Each affected stream's recovery, sorted (written to the results file only). */
  recovery_samples_ms: number[];
  model_calls: number;
  /** Model attempts that died with the worker that ran them (a retry each), from the histories. */
  died_attempts: number;
  /** Of those, the attempts that had asked the model (the fake's log): each cost a second call. */
  died_after_calling: number;
  /**
   * Answers the killed worker was receiving that the retry resumed (a resumable LLM, issue 27)
   * instead of asking again.
   */
  resumed: number;
  /** Model calls that no attempt's death explains: the customer paid twice by accident. */
  extra_model_calls: number;
  resets: number;
  reattachments: number;
  post_retries: number;
  /** Requests that ended without an HTTP status (a connection closed or refused). */
  unanswered: number;
  /** Client connections the API closed while the clients ran (the rest the clients closed). */
  connections_closed_by_api: number;
}
