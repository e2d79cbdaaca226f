import { describe, expect, it } from 'vitest';
import { ApiStatusError } from '../../local/kube-sim/api-status';
import { parseLabelSelector } from '../../local/kube-sim/label-selector';

const labels = { app: 'web', tier: 'front', 'loadplane.io/run-id': 'r1', empty: '' };

describe('parseLabelSelector', () => {
  it.each([
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['app!=db', true],
    ['app!=web', false],
    ['missing!=x', true],
    ['app in (db, web)', true],
    ['app in (db,cache)', false],
    ['missing in (x)', false],
    ['app notin (db,cache)', true],
    ['app notin (web)', false],
    ['missing notin (x)', true],
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['empty=', true],
    ['loadplane.io/run-id=r1', true],
    ['loadplane.io/run-id=r2', false],
    ['app=web,tier=front', true],
    ['app=web,tier=back', false],
    ['app in (web,db),!missing,tier', true],
    [' app = web , tier in ( front ) ', true],
  ])('%j matches the labels: %s', (selector, expected) => {
    expect(parseLabelSelector(selector)(labels)).toBe(expected);
  });

  it.each(['app=web=x', 'app in web', '=web', 'app in (a', 'a b'])('%j is a 400 Status', (selector) => {
    try {
      parseLabelSelector(selector);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ApiStatusError);
      expect((err as ApiStatusError).status).toMatchObject({ code: 400, reason: 'BadRequest' });
    }
  });
});
