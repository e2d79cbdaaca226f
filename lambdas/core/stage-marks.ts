/**
 * Steps of a stage's side effects recorded in the ledger as they are done (ledger/stages.ts markStage),
 * so a retry after a crash, a timeout or a failure knows what an earlier attempt did: for a step that
 * must happen at most once (k6's setup() and teardown()), `sent` before the request and `done` after it.
 */
export interface StageMarks {
  has(mark: string): boolean;
  /** Records the step (fenced on this attempt's lease). */
  mark(mark: string): Promise<void>;
  /** Removes it: the step is known not to have happened (its request was refused before it was sent on). */
  unmark(mark: string): Promise<void>;
}

/** The marks of setup() (Start) and teardown() (Cleanup) once per run on k6's coordinator (engines/k6/coordinator.ts). */
/** `failed` beside `done`: k6 answered that the function threw (a retry must not take `done` for success). */
export const SetupMark = { sent: 'setup:sent', done: 'setup:done', failed: 'setup:failed' } as const;
export const TeardownMark = { sent: 'teardown:sent', done: 'teardown:done', failed: 'teardown:failed' } as const;
