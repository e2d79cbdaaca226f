import { describe, expect, it } from 'vitest';
import { Scheduler, SimClock } from '../../local/kube-sim/sim-clock';

/** A clock whose real time the test moves by hand. */
function manualClock(timeScale: number) {
  let real = 1_000_000;
  const clock = new SimClock(timeScale, () => real);
  return { clock, advance: (ms: number) => (real += ms) };
}

describe('SimClock', () => {
  it('starts at real now and runs timeScale times faster', () => {
    const { clock, advance } = manualClock(600);
    expect(clock.now()).toBe(1_000_000);
    advance(100);
    expect(clock.now()).toBe(1_000_000 + 60_000);
    expect(clock.realDelayUntil(clock.now() + 6000)).toBe(10);
    expect(clock.realDelayUntil(clock.now() - 1)).toBe(0);
  });

  it('rejects a non-positive scale', () => {
    expect(() => new SimClock(0)).toThrow(RangeError);
  });
});

describe('Scheduler', () => {
  it('runs entries in sim-time order (ties in scheduling order), skips cancelled ones, stops on clear()', async () => {
    const scheduler = new Scheduler(new SimClock(1000), (err) => {
      throw err;
    });
    const ran: string[] = [];
    scheduler.after(3000, () => ran.push('c'));
    scheduler.after(1000, () => ran.push('a'));
    scheduler.after(1000, () => ran.push('b'));
    scheduler.after(2000, () => ran.push('cancelled')).cancel();
    const late = scheduler.after(60_000, () => ran.push('never'));
    await new Promise((r) => setTimeout(r, 20));
    expect(ran).toEqual(['a', 'b', 'c']);
    scheduler.clear();
    late.cancel();
    scheduler.after(0, () => ran.push('after clear'));
    await new Promise((r) => setTimeout(r, 10));
    expect(ran).toEqual(['a', 'b', 'c']);
  });

  it('reports a failing entry and keeps running the others', async () => {
    const errors: unknown[] = [];
    const scheduler = new Scheduler(new SimClock(1000), (err) => errors.push(err));
    const ran: string[] = [];
    scheduler.after(10, () => {
      throw new Error('boom');
    });
    scheduler.after(20, () => ran.push('next'));
    await new Promise((r) => setTimeout(r, 15));
    expect(errors).toHaveLength(1);
    expect(ran).toEqual(['next']);
    scheduler.clear();
  });
});
