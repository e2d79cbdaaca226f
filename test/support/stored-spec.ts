/**
 * A spec for tests that write runs to the ledger directly. The ledger stores what validateSpec
 * returned and does not validate it again; these tests need only the fields they read back.
 */
import type { RunSpec } from '../../lambdas/core/spec';

export const storedSpec = (fields: Record<string, unknown>): RunSpec => fields as unknown as RunSpec;
