import { describe, expect, it } from 'vitest';
import { ScaledClock } from '../../local/clock/scaled-clock';
import { VirtualClock } from '../../local/clock/virtual-clock';
import { Scheduler } from '../../local/kube-sim/sim-clock';

/** A scaled clock whose real time the test moves by hand. */
function manualClock(timeScale: number) {
  let real = 1_000_000;
  const clock = new ScaledClock(timeScale, () => real);
  return { clock, advance: (ms: number) => (real += ms) };
}

/** Lets pending I/O callbacks and immediates run (real time, a few event-loop turns). */
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('ScaledClock', () => {
  it('starts at real now and runs timeScale times faster', () => {
    const { clock, advance } = manualClock(600);
    expect(clock.now()).toBe(1_000_000);
    advance(100);
    expect(clock.now()).toBe(1_000_000 + 60_000);
    expect(clock.realDelayUntil(clock.now() + 6000)).toBe(10);
    expect(clock.realDelayUntil(clock.now() - 1)).toBe(0);
  });

  it('rejects a non-positive scale', () => {
    expect(() => new ScaledClock(0)).toThrow(RangeError);
  });
});

describe('Scheduler (kube-sim timers) on a clock', () => {
  it('runs entries in sim-time order (ties in scheduling order), skips cancelled ones, stops on clear()', async () => {
    const clock = new VirtualClock(0);
    const scheduler = new Scheduler(clock, (err) => {
      throw err;
    });
    const ran: string[] = [];
    scheduler.after(3000, () => ran.push('c'));
    scheduler.after(1000, () => ran.push('a'));
    scheduler.after(1000, () => ran.push('b'));
    scheduler.after(2000, () => ran.push('cancelled')).cancel();
    scheduler.after(60_000, () => ran.push('never'));
    clock.advance(5000);
    expect(ran).toEqual(['a', 'b', 'c']);
    scheduler.clear();
    scheduler.after(0, () => ran.push('after clear'));
    clock.advance(120_000);
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('reports a failing entry and keeps running the others', () => {
    const clock = new VirtualClock(0);
    const errors: unknown[] = [];
    const scheduler = new Scheduler(clock, (err) => errors.push(err));
    const ran: string[] = [];
    scheduler.after(10, () => {
      throw new Error('boom');
    });
    scheduler.after(20, () => ran.push('next'));
    clock.advance(30);
    expect(errors).toHaveLength(1);
    expect(ran).toEqual(['next']);
  });

  it('runs on a scaled clock in real time', async () => {
    const clock = new ScaledClock(1000);
    const scheduler = new Scheduler(clock, (err) => {
      throw err;
    });
    const ran: string[] = [];
    scheduler.after(1000, () => ran.push('a'));
    await new Promise((r) => setTimeout(r, 20));
    expect(ran).toEqual(['a']);
    clock.close();
  });
});

describe('VirtualClock', () => {
  it('stands still with nobody waiting, and moves only by advance()', async () => {
    const clock = new VirtualClock(1000);
    const fired: number[] = [];
    clock.at(5000, () => fired.push(clock.now()));
    await turns();
    expect(clock.now()).toBe(1000);
    clock.advance(10_000);
    expect(fired).toEqual([5000]);
    expect(clock.now()).toBe(11_000);
  });

  it('jumps to the next timer when every waiter waits: a test body sleeping 10 hours takes no real time', async () => {
    const clock = new VirtualClock(0);
    const fired: number[] = [];
    clock.at(3_600_000, () => fired.push(clock.now()));
    await clock.sleep(10 * 3_600_000);
    expect(clock.now()).toBe(10 * 3_600_000);
    expect(fired).toEqual([3_600_000]);
  });

  it('does not move while an actor works, however long its real work takes', async () => {
    const clock = new VirtualClock(0);
    const seen: number[] = [];
    const busy = clock.actor(async () => {
      // Real work (I/O, a slow machine): 30 real ms during which a sleeping actor must not wake.
      await new Promise((r) => setTimeout(r, 30));
      seen.push(clock.now());
      await clock.sleep(5000);
      seen.push(clock.now());
    });
    const sleeper = clock.actor(async () => {
      await clock.sleep(1000);
      seen.push(clock.now());
    });
    await Promise.all([busy, sleeper]);
    expect(seen).toEqual([0, 1000, 5000]);
  });

  it('lets an actor wait for another without holding time still (waitFor)', async () => {
    const clock = new VirtualClock(0);
    const order: string[] = [];
    await clock.actor(async () => {
      const child = clock.actor(async () => {
        await clock.sleep(2000);
        order.push(`child woke at ${clock.now()}`);
      });
      await clock.waitFor(child);
      order.push(`parent resumed at ${clock.now()}`);
    });
    expect(order).toEqual(['child woke at 2000', 'parent resumed at 2000']);
  });

  it('wakes actors due at the same instant in the order they slept, before moving on', async () => {
    const clock = new VirtualClock(0);
    const order: string[] = [];
    await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        clock.actor(async () => {
          await clock.sleep(1000);
          order.push(`${name}@${clock.now()}`);
          await clock.sleep(1000);
          order.push(`${name}@${clock.now()}`);
        }),
      ),
    );
    expect(order).toEqual(['a@1000', 'b@1000', 'c@1000', 'a@2000', 'b@2000', 'c@2000']);
  });

  it('ignores timers after close()', () => {
    const clock = new VirtualClock(0);
    const fired: string[] = [];
    clock.at(10, () => fired.push('x'));
    clock.close();
    clock.advance(100);
    expect(fired).toEqual([]);
  });
});
