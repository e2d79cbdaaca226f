/**
 * Wall-clock time sped up `timeScale` times (1 = real time): the clock a person watches (`npm start`
 * at 10×, `loadplane kube-sim`). It starts at the real "now". One real timer is armed for the earliest
 * entry. Actors need no bookkeeping here: the wall clock moves whatever they do.
 */
import { MAX_TIMER_MS, TimerQueue, type Scheduled, type SimTime } from './sim-time';

export class ScaledClock implements SimTime {
  private readonly realOrigin: number;
  private readonly queue = new TimerQueue();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly timeScale: number,
    private readonly realNow: () => number = Date.now,
    private readonly onError: (err: unknown) => void = (err) => console.error('clock: a timer failed:', err),
    /**
     * The real instant (epoch ms) at which simulated and real time agree; default: now. Two clocks of
     * the same scale and origin read the same time, even in two processes (bench/ runs kube-sim in one).
     */
    realOrigin: number = realNow(),
  ) {
    if (!(timeScale > 0)) throw new RangeError(`timeScale must be > 0, got ${timeScale}`);
    this.realOrigin = realOrigin;
  }

  /** The real instant (epoch ms) at which simulated and real time agree. */
  get origin(): number {
    return this.realOrigin;
  }

  now(): number {
    return this.realOrigin + (this.realNow() - this.realOrigin) * this.timeScale;
  }

  /** Real milliseconds until simulated instant `simAt` (0 when it has passed). */
  realDelayUntil(simAt: number): number {
    return Math.max(0, (simAt - this.now()) / this.timeScale);
  }

  at(at: number, run: () => void): Scheduled {
    const scheduled = this.queue.add(at, run);
    this.arm();
    return scheduled;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.at(this.now() + Math.max(0, ms), resolve));
  }

  actor<T>(work: () => Promise<T>): Promise<T> {
    return work();
  }

  waitFor<T>(promise: Promise<T>): Promise<T> {
    return promise;
  }

  close(): void {
    this.queue.clear();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const due = this.queue.nextDue();
    if (due === undefined || this.queue.closed) return;
    const delay = Math.min(MAX_TIMER_MS, Math.ceil(this.realDelayUntil(due)));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.queue.runDue(() => this.now(), this.onError);
      this.arm();
    }, delay);
  }
}
