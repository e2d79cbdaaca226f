/**
 * Simulated time for the local runtime (architecture §9): one clock that kube-sim, the local state machine
 * engine, the ledger's leases and every wait read, so nothing local compares two different clocks.
 *
 * Two implementations:
 * - ScaledClock: runs `timeScale` times faster than the wall clock (`npm start`, `loadplane kube-sim`),
 *   so a person can watch a run progress;
 * - VirtualClock: moves only when every actor is waiting on it (a discrete-event simulation), so an
 *   outcome never depends on how fast the machine is (tests).
 *
 * An actor is one line of work that can wait on the clock: an execution, a stage invocation that
 * outlives its Task timeout, the reaper. Time stands still while any actor is working (calling the
 * API server, the ledger, a webhook); real-time I/O bounds (socket timeouts) stay real.
 */
export interface Scheduled {
  cancel(): void;
}

export interface SimTime {
  /** Epoch ms on this clock. */
  now(): number;
  /** Simulated seconds per real second (undefined: virtual, it moves only when everyone waits). */
  readonly timeScale: number | undefined;
  /** Calls `run` when the clock reaches `at` (epoch ms); entries due at the same instant run in the order they were set. */
  at(at: number, run: () => void): Scheduled;
  /** Resolves after `ms` of this clock's time. */
  sleep(ms: number): Promise<void>;
  /** Runs `work` as an actor of its own: the clock waits for it whenever it is not waiting on the clock. */
  actor<T>(work: () => Promise<T>): Promise<T>;
  /** The calling actor waits for `promise` (another actor, or a timer) without holding the clock still. */
  waitFor<T>(promise: Promise<T>): Promise<T>;
  /** Drops every pending timer; later ones are ignored. */
  close(): void;
}

/** setTimeout's ceiling; a longer wait re-arms when it fires. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A timer queue ordered by (due, order of setting): shared by both clocks. */
export class TimerQueue {
  private entries: Array<{ due: number; seq: number; run: () => void; cancelled: boolean }> = [];
  private seq = 0;
  closed = false;

  add(due: number, run: () => void): Scheduled {
    const entry = { due, seq: this.seq++, run, cancelled: false };
    if (!this.closed) {
      // Insert in order: the queue is short, and most new entries go near the end.
      let i = this.entries.length;
      while (i > 0 && this.entries[i - 1]!.due > due) i--;
      this.entries.splice(i, 0, entry);
    }
    return {
      cancel: () => {
        entry.cancelled = true;
      },
    };
  }

  /** The earliest pending instant, or undefined. */
  nextDue(): number | undefined {
    while (this.entries[0]?.cancelled) this.entries.shift();
    return this.entries[0]?.due;
  }

  /** Runs every entry due at or before `now`, including those added meanwhile; errors go to `onError`. */
  runDue(now: () => number, onError: (err: unknown) => void): void {
    for (;;) {
      const due = this.nextDue();
      if (this.closed || due === undefined || due > now()) return;
      const entry = this.entries.shift()!;
      try {
        entry.run();
      } catch (err) {
        onError(err);
      }
    }
  }

  clear(): void {
    this.closed = true;
    this.entries = [];
  }
}
