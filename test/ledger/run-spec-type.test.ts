/**
 * The ledger's run spec is typed at its boundary (items.ts asAdmittedSpec): a run is created from the
 * RunSpec validation returned and handed back as one, or as RunSpecWithoutScript from a read without
 * its script. Checked by `tsc --noEmit` (expectTypeOf does nothing at run time).
 */
import { expectTypeOf, it } from 'vitest';
import type { RunSpec, RunSpecWithoutScript } from '../../lambdas/core/spec';
import type { RunItem } from '../../lambdas/ledger/items';
import type { AdoptRunResult, CreateRunInput, CreateRunResult } from '../../lambdas/ledger/runs';
import type { RunView } from '../../lambdas/ledger/queries';

it('createRun takes a RunSpec; writes hand back RunSpec; getRun gives either', () => {
  expectTypeOf<CreateRunInput['spec']>().toEqualTypeOf<RunSpec>();
  expectTypeOf<CreateRunResult['run']['spec']>().toEqualTypeOf<RunSpec>();
  expectTypeOf<AdoptRunResult['run']['spec']>().toEqualTypeOf<RunSpec>();
  expectTypeOf<RunView['run']['spec']>().toEqualTypeOf<RunSpec | RunSpecWithoutScript>();
  expectTypeOf<RunItem<RunSpecWithoutScript>['spec']>().toEqualTypeOf<RunSpecWithoutScript>();
});
