/**
 * Time that moves only when every actor waits on it (a discrete-event simulation): the tests' clock.
 * While any actor is working (calling the API server, the ledger, a webhook), time stands still, so
 * a busy machine makes a run slower, never different. When all wait, the clock jumps to the earliest
 * timer and runs every entry due then (kube-sim's controllers, Waits, retry delays, leases).
 *
 * Actors are tracked through AsyncLocalStorage, so code deep in a stage can `sleep` on the clock
 * without knowing who it runs for. A caller that is not an actor (a test body) waiting on the clock
 * counts as a waiting actor for as long as it waits. With no actor at all, time stands still until
 * `advance` is called.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { TimerQueue, type Scheduled, type SimTime } from './sim-time';

interface Actor {
  /** Waits in progress; the actor works while there are none. */
  waiting: number;
  done: boolean;
}

export class VirtualClock implements SimTime {
  readonly timeScale = undefined;
  private current: number;
  private readonly queue = new TimerQueue();
  private readonly context = new AsyncLocalStorage<Actor>();
  /** Actors (and non-actor waiters) that exist. */
  private live = 0;
  /** Actors that are not waiting. */
  private working = 0;
  private checkPending = false;

  constructor(
    start: number = Date.now(),
    private readonly onError: (err: unknown) => void = (err) => console.error('clock: a timer failed:', err),
  ) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  /** Actors (and non-actor waiters) alive now: 0 means time stands still until someone waits or advances it. */
  get actors(): number {
    return this.live;
  }

  at(at: number, run: () => void): Scheduled {
    const scheduled = this.queue.add(at, run);
    this.poke();
    return scheduled;
  }

  sleep(ms: number): Promise<void> {
    const actor = this.context.getStore();
    return new Promise((resolve) => {
      this.beginWait(actor);
      this.queue.add(this.current + Math.max(0, ms), () => {
        // Accounted synchronously, before anything else due at this instant runs or the clock moves on.
        this.endWait(actor);
        resolve();
      });
      this.poke();
    });
  }

  actor<T>(work: () => Promise<T>): Promise<T> {
    const actor: Actor = { waiting: 0, done: false };
    this.live++;
    this.working++;
    return this.context.run(actor, async () => {
      try {
        return await work();
      } finally {
        actor.done = true;
        this.live--;
        if (actor.waiting === 0) this.working--;
        this.poke();
      }
    });
  }

  waitFor<T>(promise: Promise<T>): Promise<T> {
    const actor = this.context.getStore();
    this.beginWait(actor);
    return promise.finally(() => this.endWait(actor));
  }

  /** Moves the clock forward by `ms`, running every timer due on the way, whoever waits (tests). */
  advance(ms: number): void {
    const target = this.current + Math.max(0, ms);
    for (let due = this.queue.nextDue(); due !== undefined && due <= target; due = this.queue.nextDue()) {
      this.current = Math.max(this.current, due);
      this.queue.runDue(() => this.current, this.onError);
    }
    this.current = target;
  }

  close(): void {
    this.queue.clear();
  }

  private beginWait(actor: Actor | undefined): void {
    if (!actor) this.live++;
    else if (actor.waiting++ === 0 && !actor.done) this.working--;
    this.poke();
  }

  private endWait(actor: Actor | undefined): void {
    if (!actor) this.live--;
    else if (--actor.waiting === 0 && !actor.done) this.working++;
  }

  /** Checks for idleness once pending callbacks have run (the next turn of the event loop). */
  private poke(): void {
    if (this.checkPending || this.queue.closed) return;
    this.checkPending = true;
    // Outside any actor's context: what the timers run belongs to whoever set them.
    this.context.exit(() =>
      setImmediate(() => {
        this.checkPending = false;
        this.step();
      }),
    );
  }

  /** When everyone waits, jump to the earliest timer and run what is due then. */
  private step(): void {
    if (this.working > 0 || this.live === 0) return;
    const due = this.queue.nextDue();
    if (due === undefined) return;
    this.current = Math.max(this.current, due);
    this.queue.runDue(() => this.current, this.onError);
    this.poke();
  }
}
