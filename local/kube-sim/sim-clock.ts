/**
 * kube-sim's timers, on the simulated clock it is given (local/clock): a ScaledClock (time runs
 * `timeScale` times faster than the wall clock) or the tests' VirtualClock (time moves when every
 * actor waits). Every timestamp kube-sim writes (creationTimestamp, startTime, log lines) is sim time.
 */
import type { Scheduled, SimTime } from '../clock/sim-time';

export type { Scheduled } from '../clock/sim-time';

/**
 * The one timer queue of a kube-sim instance: every controller, kubelet and simulated engine schedules
 * here, in sim time. Entries due at the same instant run in the order they were scheduled; a failing
 * entry is reported and the others run. clear() drops everything of this instance (close()), not the
 * clock's other users' timers.
 */
export class Scheduler {
  private readonly pending = new Set<Scheduled>();
  private stopped = false;

  constructor(
    readonly clock: SimTime,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Runs `run` after `simMs` simulated milliseconds (0 = as soon as the event loop allows). */
  after(simMs: number, run: () => void): Scheduled {
    return this.at(this.clock.now() + Math.max(0, simMs), run);
  }

  at(simAt: number, run: () => void): Scheduled {
    if (this.stopped) return { cancel: () => undefined };
    const scheduled: Scheduled = this.clock.at(simAt, () => {
      this.pending.delete(scheduled);
      if (this.stopped) return;
      try {
        run();
      } catch (err) {
        this.onError(err);
      }
    });
    this.pending.add(scheduled);
    return {
      cancel: () => {
        this.pending.delete(scheduled);
        scheduled.cancel();
      },
    };
  }

  clear(): void {
    this.stopped = true;
    for (const scheduled of this.pending) scheduled.cancel();
    this.pending.clear();
  }
}

/** What only reads the time (the object store's timestamps, the request log). */
export type SimClock = Pick<SimTime, 'now'>;
