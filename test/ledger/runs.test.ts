import { expect, it } from 'vitest';
import { InvalidTransition, RunConflict, RunNotFound } from '../../lambdas/core/errors';
import { OUTCOMES, Outcome, RunStatus } from '../../lambdas/core/status';
import { describeOnLedgerBackends } from '../support/dynamo-backends';
import { RACERS, apiTrigger, countBy, errorNames, givenRun, ledgerOn, newRunId, race, testClock } from './fixtures';
import { storedSpec } from '../support/stored-spec';

describeOnLedgerBackends((table) => {
  const specA = { engine: 'k6', parallelism: 2, script: 'export default () => {}' };
  const specB = { engine: 'k6', parallelism: 3, script: 'export default () => {}' };

  it('createRun: created, then existing for the same spec, RunConflict carrying the current run for another', async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const created = await ledger.createRun({
      runId,
      spec: storedSpec(specA),
      specHash: 'a',
      trigger: apiTrigger,
      deadlines: { run: '2026-03-15T13:00:00.000Z' },
    });
    expect(created).toMatchObject({
      kind: 'created',
      run: { runId, spec: specA, specHash: 'a', status: RunStatus.PENDING, trigger: apiTrigger, createdAt: '2026-03-15T12:00:00.000Z' },
    });
    expect(created.run.deadlines).toEqual({ run: '2026-03-15T13:00:00.000Z' });
    expect(created.run.expiresAt).toBe(Date.parse('2026-03-15T12:00:00.000Z') / 1000 + 90 * 86_400);

    const again = await ledger.createRun({ runId, spec: storedSpec(specA), specHash: 'a', trigger: apiTrigger });
    expect(again).toEqual({ kind: 'existing', run: created.run });

    const conflict = await ledger.createRun({ runId, spec: storedSpec(specB), specHash: 'b', trigger: apiTrigger }).catch((e) => e);
    expect(conflict).toBeInstanceOf(RunConflict);
    expect(conflict).toMatchObject({ runId, current: { specHash: 'a', spec: specA } });
  });

  it(`createRun race: ${RACERS} callers with the same key and spec → 1 created, the rest existing`, async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const { values, errors } = await race(() => ledger.createRun({ runId, spec: storedSpec(specA), specHash: 'a', trigger: apiTrigger }));
    expect(errors).toEqual([]);
    expect(countBy(values, (v) => v.kind)).toEqual({ created: 1, existing: RACERS - 1 });
  });

  it(`createRun race: ${RACERS} callers, half with another spec → 1 created, its spec's callers existing, the others RunConflict`, async () => {
    const ledger = ledgerOn(table());
    const runId = newRunId();
    const { values, errors } = await race((i) =>
      ledger.createRun({ runId, spec: storedSpec(i % 2 ? specB : specA), specHash: i % 2 ? 'b' : 'a', trigger: apiTrigger }),
    );
    expect(countBy(values, (v) => v.kind)).toEqual({ created: 1, existing: RACERS / 2 - 1 });
    expect(errorNames(errors)).toEqual({ RunConflict: RACERS / 2 });
    const winner = values.find((v) => v.kind === 'created')!.run.specHash;
    expect(new Set(values.map((v) => v.run.specHash))).toEqual(new Set([winner]));
    for (const e of errors) expect((e as RunConflict).current).toMatchObject({ specHash: winner });
  });

  it('adoptRun: first execution adopts, the same one again is adopted, another is a duplicate; missing run → RunNotFound', async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    expect(await ledger.adoptRun(runId, 'arn:exec:1')).toMatchObject({ kind: 'adopted', run: { executionArn: 'arn:exec:1' } });
    expect(await ledger.adoptRun(runId, 'arn:exec:1')).toMatchObject({ kind: 'adopted', run: { executionArn: 'arn:exec:1' } });
    expect(await ledger.adoptRun(runId, 'arn:exec:2')).toMatchObject({ kind: 'duplicate', run: { executionArn: 'arn:exec:1' } });
    await expect(ledger.adoptRun(newRunId(), 'arn:exec:1')).rejects.toBeInstanceOf(RunNotFound);
  });

  it(`adoptRun race: ${RACERS} executions → 1 adopted, ${RACERS - 1} duplicate, all naming the winner`, async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    const { values, errors } = await race((i) => ledger.adoptRun(runId, `arn:exec:${i}`));
    expect(errors).toEqual([]);
    expect(countBy(values, (v) => v.kind)).toEqual({ adopted: 1, duplicate: RACERS - 1 });
    const winner = values.find((v) => v.kind === 'adopted')!.run.executionArn;
    expect(values.every((v) => v.run.executionArn === winner)).toBe(true);
  });

  it('endUnstartedRun: ends a run no execution adopted, once; loses to an adoption, and an adoption after it finds a run with its outcome', async () => {
    const ledger = ledgerOn(table());
    const unadopted = await givenRun(ledger);
    expect(await ledger.endUnstartedRun(unadopted, Outcome.FAILED, 'name taken')).toMatchObject({
      kind: 'ended',
      run: { status: Outcome.FAILED, outcome: Outcome.FAILED, outcomeReason: 'name taken' },
    });
    expect(await ledger.endUnstartedRun(unadopted, Outcome.FAILED, 'again')).toMatchObject({ kind: 'already-decided', run: { outcomeReason: 'name taken' } });
    const adopted = await givenRun(ledger);
    await ledger.adoptRun(adopted, 'arn:exec:1');
    expect(await ledger.endUnstartedRun(adopted, Outcome.FAILED, 'name taken')).toMatchObject({
      kind: 'adopted',
      run: { status: RunStatus.PENDING, executionArn: 'arn:exec:1' },
    });
    expect((await ledger.getRun(adopted))!.run.outcome).toBeUndefined();
    await expect(ledger.endUnstartedRun(newRunId(), Outcome.FAILED, 'x')).rejects.toBeInstanceOf(RunNotFound);
  });

  it(`endUnstartedRun against ${RACERS} adoptions at once: it ends the run only if it came first, else the run keeps no outcome`, async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    const { values, errors } = await race<{ kind: string }>((i) =>
      i === 0 ? ledger.endUnstartedRun(runId, Outcome.FAILED, 'name taken') : ledger.adoptRun(runId, `arn:exec:${i}`),
    );
    expect(errors).toEqual([]);
    // No errors, so values keep the callers' order: the first is endUnstartedRun's.
    const ending = values[0]!;
    expect(['ended', 'adopted']).toContain(ending.kind);
    const { run } = (await ledger.getRun(runId))!;
    // An Admit that adopts a run already ended finds its outcome and touches nothing (admit.ts).
    expect(run.outcome).toBe(ending.kind === 'ended' ? Outcome.FAILED : undefined);
    expect(run.executionArn).toMatch(/^arn:exec:/);
  });

  it.each([
    { from: RunStatus.PENDING, to: RunStatus.PREPARING, expected: 'changed' },
    { from: RunStatus.PREPARING, to: RunStatus.RUNNING, expected: 'changed' },
    { from: RunStatus.RUNNING, to: RunStatus.RUNNING, expected: 'unchanged' },
    { from: RunStatus.PENDING, to: RunStatus.PENDING, expected: 'unchanged' },
    { from: RunStatus.RUNNING, to: RunStatus.PREPARING, expected: 'InvalidTransition' },
    { from: RunStatus.COLLECTING, to: RunStatus.PENDING, expected: 'InvalidTransition' },
    { from: RunStatus.PENDING, to: RunStatus.SUCCEEDED, expected: 'InvalidTransition' },
  ])('setStatus $from → $to: $expected', async ({ from, to, expected }) => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    if (from !== RunStatus.PENDING) await ledger.setStatus(runId, from);
    const result = await ledger.setStatus(runId, to, { reason: 'test' }).catch((e: Error) => e);
    if (result instanceof Error) {
      expect(result.name).toBe(expected);
      expect((result as InvalidTransition).current).toMatchObject({ runId, status: from });
    } else {
      expect(result.kind).toBe(expected);
      expect(result.run.status).toBe(to);
    }
    expect((await ledger.getRun(runId))!.run.status).toBe(expected === 'InvalidTransition' ? from : to);
  });

  it('setStatus on a missing run → RunNotFound', async () => {
    const ledger = ledgerOn(table());
    await expect(ledger.setStatus(newRunId(), RunStatus.PREPARING)).rejects.toBeInstanceOf(RunNotFound);
    await expect(ledger.setStatus(newRunId(), RunStatus.FAILED)).rejects.toBeInstanceOf(RunNotFound);
  });

  it('a terminal status is never overwritten: setStatus after decide → InvalidTransition; a second decide → already-decided', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = await givenRun(ledger);
    await ledger.setStatus(runId, RunStatus.RUNNING);
    clock.advance(60_000);
    const decided = await ledger.decideOutcome(runId, Outcome.THRESHOLDS_FAILED, 'runner 1 exited 99', {
      summary: { requests: 1200, thresholdsOk: false },
    });
    expect(decided).toMatchObject({
      kind: 'decided',
      outcome: Outcome.THRESHOLDS_FAILED,
      reason: 'runner 1 exited 99',
      run: { status: Outcome.THRESHOLDS_FAILED, decidedAt: '2026-03-15T12:01:00.000Z', summary: { requests: 1200 } },
    });

    for (const status of [RunStatus.COLLECTING, RunStatus.RUNNING]) {
      const error = await ledger.setStatus(runId, status).catch((e) => e);
      expect(error).toBeInstanceOf(InvalidTransition);
      expect(error.current).toMatchObject({ status: Outcome.THRESHOLDS_FAILED });
    }
    await expect(ledger.setStatus(runId, RunStatus.SUCCEEDED)).rejects.toBeInstanceOf(InvalidTransition);
    expect(await ledger.decideOutcome(runId, Outcome.SUCCEEDED, 'late')).toMatchObject({
      kind: 'already-decided',
      outcome: Outcome.THRESHOLDS_FAILED,
      reason: 'runner 1 exited 99',
    });
    const { run } = (await ledger.getRun(runId))!;
    expect(run).toMatchObject({ status: Outcome.THRESHOLDS_FAILED, outcome: Outcome.THRESHOLDS_FAILED, outcomeReason: 'runner 1 exited 99' });
  });

  it(`decideOutcome race: ${RACERS} callers with different outcomes → one recorded, every caller reports it`, async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    const { values, errors } = await race((i) => ledger.decideOutcome(runId, OUTCOMES[i % OUTCOMES.length]!, `caller ${i}`));
    expect(errors).toEqual([]);
    expect(countBy(values, (v) => v.kind)).toEqual({ decided: 1, 'already-decided': RACERS - 1 });
    const first = values.find((v) => v.kind === 'decided')!;
    expect(new Set(values.map((v) => `${v.outcome}/${v.reason}`))).toEqual(new Set([`${first.outcome}/${first.reason}`]));
    expect((await ledger.getRun(runId))!.run).toMatchObject({ outcome: first.outcome, outcomeReason: first.reason, status: first.outcome });
  });

  it('decideOutcome on a missing run → RunNotFound', async () => {
    await expect(ledgerOn(table()).decideOutcome(newRunId(), Outcome.FAILED, 'x')).rejects.toBeInstanceOf(RunNotFound);
  });

  it('requestAbort: requested, then already-requested (first requester kept), already-finished after an outcome; RunNotFound', async () => {
    const clock = testClock();
    const ledger = ledgerOn(table(), clock);
    const runId = await givenRun(ledger);
    expect(await ledger.requestAbort(runId, 'alice')).toMatchObject({
      kind: 'requested',
      run: { abortRequestedBy: 'alice', abortRequestedAt: '2026-03-15T12:00:00.000Z' },
    });
    clock.advance(1_000);
    expect(await ledger.requestAbort(runId, 'bob')).toMatchObject({ kind: 'already-requested', run: { abortRequestedBy: 'alice' } });
    await ledger.decideOutcome(runId, Outcome.ABORTED, 'abort requested by alice');
    expect(await ledger.requestAbort(runId, 'bob')).toMatchObject({ kind: 'already-finished', outcome: Outcome.ABORTED });

    const finished = await givenRun(ledger);
    await ledger.decideOutcome(finished, Outcome.SUCCEEDED, 'done');
    expect(await ledger.requestAbort(finished, 'carol')).toMatchObject({ kind: 'already-finished', outcome: Outcome.SUCCEEDED });
    await expect(ledger.requestAbort(newRunId(), 'dave')).rejects.toBeInstanceOf(RunNotFound);
  });

  it('getRun: the run with its stages and notifications by name, without storage attributes; undefined when absent', async () => {
    const ledger = ledgerOn(table());
    const runId = await givenRun(ledger);
    await ledger.beginStage(runId, 'Admit', 'owner-1', 60_000);
    await ledger.completeStage(runId, 'Admit', 'owner-1', { deadlines: { run: 'x' } });
    await ledger.beginStage(runId, 'Prepare', 'owner-1', 60_000);
    await ledger.claimNotification(runId, 'slack', { leaseMs: 60_000, policy: 'atMostOnce', outcome: Outcome.SUCCEEDED });

    const view = (await ledger.getRun(runId))!;
    expect(view.run.runId).toBe(runId);
    expect(Object.keys(view.stages).sort()).toEqual(['Admit', 'Prepare']);
    expect(view.stages.Admit).toMatchObject({ state: 'completed', output: { deadlines: { run: 'x' } }, attempts: 1 });
    expect(view.stages.Prepare).toMatchObject({ state: 'in_progress', owner: 'owner-1' });
    expect(Object.keys(view.notifications)).toEqual(['slack']);
    for (const key of ['pk', 'sk', 'statusRank', 'timeBucket', 'createdKey']) expect(view.run).not.toHaveProperty(key);
    expect(view.stages.Admit).not.toHaveProperty('pk');

    expect(await ledger.getRun(newRunId())).toBeUndefined();
  });
});
