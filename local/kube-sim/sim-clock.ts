/**
 * Simulated time. The sim clock starts at the real "now" when kube-sim starts and then runs
 * `timeScale` times faster than the wall clock, so a 10-minute test at timeScale 600 takes one real
 * second. Every timestamp kube-sim writes (creationTimestamp, startTime, log lines) is sim time.
 */
export class SimClock {
  private readonly realOrigin: number;

  constructor(
    readonly timeScale: number,
    private readonly realNow: () => number = Date.now,
  ) {
    if (!(timeScale > 0)) throw new RangeError(`timeScale must be > 0, got ${timeScale}`);
    this.realOrigin = realNow();
  }

  /** Simulated epoch ms. */
  now(): number {
    return this.realOrigin + (this.realNow() - this.realOrigin) * this.timeScale;
  }

  /** Real milliseconds until simulated instant `simAt` (0 when it has passed). */
  realDelayUntil(simAt: number): number {
    return Math.max(0, (simAt - this.now()) / this.timeScale);
  }
}

export interface Scheduled {
  cancel(): void;
}

interface Entry {
  due: number;
  seq: number;
  run: () => void;
  cancelled: boolean;
}

/** setTimeout's ceiling; longer waits re-arm when it fires. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The one timer queue of a kube-sim instance: every controller, kubelet and simulated engine schedules
 * here, in sim time. Entries due at the same instant run in the order they were scheduled. One real
 * timer is armed for the earliest entry; clear() drops everything (close()).
 */
export class Scheduler {
  private queue: Entry[] = [];
  private seq = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    readonly clock: SimClock,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Runs `run` after `simMs` simulated milliseconds (0 = as soon as the event loop allows). */
  after(simMs: number, run: () => void): Scheduled {
    return this.at(this.clock.now() + Math.max(0, simMs), run);
  }

  at(simAt: number, run: () => void): Scheduled {
    const entry: Entry = { due: simAt, seq: this.seq++, run, cancelled: false };
    if (!this.stopped) {
      this.queue.push(entry);
      this.queue.sort((a, b) => a.due - b.due || a.seq - b.seq);
      this.arm();
    }
    return {
      cancel: () => {
        entry.cancelled = true;
      },
    };
  }

  clear(): void {
    this.stopped = true;
    this.queue = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const first = this.queue[0];
    if (!first || this.stopped) return;
    const delay = Math.min(MAX_TIMER_MS, Math.ceil(this.clock.realDelayUntil(first.due)));
    this.timer = setTimeout(() => this.fire(), delay);
  }

  private fire(): void {
    this.timer = undefined;
    const now = this.clock.now();
    while (!this.stopped && this.queue.length > 0 && this.queue[0]!.due <= now) {
      const entry = this.queue.shift()!;
      if (entry.cancelled) continue;
      try {
        entry.run();
      } catch (err) {
        this.onError(err);
      }
    }
    this.arm();
  }
}
