/**
 * The state transitions a stage invocation stands for, read off the run's definitions
 * (statemachine/run.asl.json and its cruise window, cruise.asl.json), so that a run can count what
 * Step Functions bills it without reading its execution history.
 *
 * Step Functions bills one transition per state entered and one per retry (aws-history.ts). Every
 * Lambda Task attempt is one stage invocation: the first attempt of a visit is the state's entry,
 * each later one a retry, so each invocation is one transition. What no invocation sees are the
 * states between two Lambda Tasks (Choice, Wait, Pass, Succeed, Fail, and the CruiseWindow Task that
 * runs a child execution, with the child's states up to its first Lambda Task). Those are counted
 * here, walking the definition from the Task just run to the next Lambda Task or the end, with the
 * Task's answer as the state's output: a Choice is decided on it; one whose Variable lies outside what
 * the Task's answer shows (its input, which the stage does not see) counts only if every branch it may
 * take enters as many states before the next Lambda Task (Finished after Cleanup: a Fail or a Succeed,
 * one state either way), and is an error in the definition otherwise (a test walks every Task).
 *
 * An invocation that threw: its Task retries it (the next invocation is the retry and counts itself)
 * when a Retrier's ErrorEquals names the error, else the first Catch that does leads on (a Fail,
 * counted here, or a Lambda Task, which counts itself). A retried error whose attempts are used up
 * (MaxAttempts) is not known here: such a run's count misses the Fail its Catch then enters.
 */
import cruiseDefinition from '../../statemachine/cruise.asl.json' with { type: 'json' };
import runDefinition from '../../statemachine/run.asl.json' with { type: 'json' };

/** Which Task of which definition an invocation ran: the Task's `state` (and `machine`) Parameters. */
export interface TaskRef {
  machine: 'run' | 'cruise';
  state: string;
}

interface ChoiceRule {
  Variable?: string;
  StringEquals?: string;
  BooleanEquals?: boolean;
  IsPresent?: boolean;
  And?: ChoiceRule[];
  Or?: ChoiceRule[];
  Not?: ChoiceRule;
  Next?: string;
}

interface AslState {
  Type: string;
  Resource?: string;
  Next?: string;
  End?: boolean;
  Default?: string;
  Choices?: ChoiceRule[];
  InputPath?: string | null;
  ResultPath?: string | null;
  ResultSelector?: Record<string, string>;
  Retry?: Array<{ ErrorEquals: string[] }>;
  Catch?: Array<{ ErrorEquals: string[]; Next: string }>;
  Parameters?: Record<string, unknown>;
}

interface AslMachine {
  StartAt: string;
  States: Record<string, AslState>;
}

const MACHINES: Record<TaskRef['machine'], AslMachine> = {
  run: runDefinition as unknown as AslMachine,
  cruise: cruiseDefinition as unknown as AslMachine,
};

/** The Resource of a Task that runs a child execution to its end: here always the cruise window. */
const START_EXECUTION_SYNC = 'arn:aws:states:::states:startExecution.sync:2';
const ANY_ERROR = 'States.ALL';

/** A value the walk cannot know (the state's input, which the stage never sees). */
const UNKNOWN = Symbol('unknown');
/** Marks an object whose keys not listed are unknown rather than absent. */
const PARTIAL = Symbol('partial');
type Doc = typeof UNKNOWN | unknown;

const isLambdaTask = (s: AslState) => s.Type === 'Task' && s.Resource !== START_EXECUTION_SYNC;

function segments(path: string): string[] {
  if (path === '$') return [];
  if (!path.startsWith('$.')) throw new Error(`asl-transitions: path ${path} is not a plain $.a.b path`);
  return path.slice(2).split('.');
}

function lookup(doc: Doc, path: string): Doc {
  let at: Doc = doc;
  for (const key of segments(path)) {
    if (at === UNKNOWN) return UNKNOWN;
    if (at === null || typeof at !== 'object') return undefined;
    const obj = at as Record<string | symbol, unknown>;
    if (key in obj) at = obj[key];
    else return obj[PARTIAL] ? UNKNOWN : undefined;
  }
  return at;
}

/** `value` placed at `path` in `doc` (ResultPath): the rest of `doc` as it was (unknown stays unknown). */
function place(doc: Doc, path: string | null | undefined, value: Doc): Doc {
  if (path === null) return doc;
  if (path === undefined || path === '$') return value;
  const keys = segments(path);
  const base: Record<string | symbol, unknown> =
    doc !== UNKNOWN && doc !== null && typeof doc === 'object' ? { ...(doc as object) } : { [PARTIAL]: doc === UNKNOWN };
  let at = base;
  keys.forEach((key, i) => {
    if (i === keys.length - 1) at[key] = value;
    else {
      const next = at[key];
      const copy: Record<string | symbol, unknown> =
        next !== UNKNOWN && next !== null && typeof next === 'object'
          ? { ...(next as object) }
          : { [PARTIAL]: next === UNKNOWN || (!(key in at) && at[PARTIAL] === true) };
      at[key] = copy;
      at = copy;
    }
  });
  return base;
}

/** A Choice rule on `doc`: true, false, or UNKNOWN when it reads what the walk does not know. */
function test(rule: ChoiceRule, doc: Doc): boolean | typeof UNKNOWN {
  if (rule.And)
    return combine(
      rule.And.map((r) => test(r, doc)),
      true,
    );
  if (rule.Or)
    return combine(
      rule.Or.map((r) => test(r, doc)),
      false,
    );
  if (rule.Not) {
    const inner = test(rule.Not, doc);
    return inner === UNKNOWN ? UNKNOWN : !inner;
  }
  if (rule.Variable === undefined) throw new Error('asl-transitions: a Choice rule without Variable');
  const value = lookup(doc, rule.Variable);
  if (value === UNKNOWN) return UNKNOWN;
  if (rule.IsPresent !== undefined) return (value !== undefined) === rule.IsPresent;
  if (rule.StringEquals !== undefined) return value === rule.StringEquals;
  if (rule.BooleanEquals !== undefined) return value === rule.BooleanEquals;
  throw new Error(`asl-transitions: a Choice operator on ${rule.Variable} this walk does not read`);
}

/** And (`all` true) or Or over three-valued results. */
function combine(results: Array<boolean | typeof UNKNOWN>, all: boolean): boolean | typeof UNKNOWN {
  if (results.includes(!all)) return !all;
  return results.includes(UNKNOWN) ? UNKNOWN : all;
}

interface Where {
  machine: TaskRef['machine'];
  state: string;
}

/** States entered from `at` (itself included) up to the next Lambda Task or the run's end. */
function walk(at: Where, doc: Doc, seen = 0): number {
  if (seen > 50) throw new Error(`asl-transitions: no Lambda Task or end reached from ${at.machine}.${at.state}`);
  const machine = MACHINES[at.machine];
  const state = machine.States[at.state];
  if (!state) throw new Error(`asl-transitions: no state ${at.state} in the ${at.machine} definition`);
  if (isLambdaTask(state)) return 0;
  const next = (name: string, d: Doc) => 1 + walk({ machine: at.machine, state: name }, d, seen + 1);
  switch (state.Type) {
    case 'Task': {
      // The cruise window: this Task, then the child's states up to its first Lambda Task.
      return 1 + walk({ machine: 'cruise', state: MACHINES.cruise.StartAt }, UNKNOWN, seen + 1);
    }
    case 'Choice': {
      const rules = state.Choices ?? [];
      for (let i = 0; i < rules.length; i++) {
        const result = test(rules[i]!, doc);
        if (result === true) return next(rules[i]!.Next!, doc);
        if (result === UNKNOWN) {
          const branches = [...rules.slice(i).map((r) => r.Next!), ...(state.Default ? [state.Default] : [])];
          const counts = new Set(branches.map((b) => next(b, doc)));
          if (counts.size !== 1)
            throw new Error(`asl-transitions: ${at.machine}.${at.state} reads what the Task before it does not answer, and its branches differ`);
          return [...counts][0]!;
        }
      }
      if (!state.Default) throw new Error(`asl-transitions: ${at.machine}.${at.state} has no Default`);
      return next(state.Default, doc);
    }
    case 'Pass': {
      const input = state.InputPath === undefined || state.InputPath === null ? doc : lookup(doc, state.InputPath);
      return next(state.Next!, place(doc, state.ResultPath, input));
    }
    case 'Wait':
      return next(state.Next!, doc);
    case 'Succeed':
      return 1 + (at.machine === 'cruise' ? afterWindow(doc, seen) : 0);
    case 'Fail':
      return 1;
    default:
      throw new Error(`asl-transitions: state type ${state.Type} (${at.machine}.${at.state}) is not walked`);
  }
}

/** The cruise window ended with output `doc`: the run's CruiseWindow Task passes it on (ResultSelector, ResultPath). */
function afterWindow(doc: Doc, seen: number): number {
  const task = Object.values(MACHINES.run.States).find((s) => s.Resource === START_EXECUTION_SYNC)!;
  const answer = { Output: doc, [PARTIAL]: true };
  const selected = task.ResultSelector
    ? Object.fromEntries(Object.entries(task.ResultSelector).map(([k, path]) => [k.replace(/\.\$$/, ''), lookup(answer, path)]))
    : answer;
  return walk({ machine: 'run', state: task.Next! }, place(UNKNOWN, task.ResultPath, selected), seen + 1);
}

/**
 * Transitions one invocation of `task` stands for: its own (entry or retry) and the states the
 * execution enters after it before the next Lambda Task (see the header).
 */
export function invocationTransitions(task: TaskRef, outcome: { result: unknown } | { error: string }): number {
  const machine = MACHINES[task.machine];
  const state = machine.States[task.state];
  if (!state || !isLambdaTask(state)) throw new Error(`asl-transitions: ${task.machine}.${task.state} is not a Lambda Task`);
  if ('error' in outcome) {
    const names = (equals: string[]) => equals.includes(outcome.error) || equals.includes(ANY_ERROR);
    if ((state.Retry ?? []).some((r) => names(r.ErrorEquals))) return 1;
    const caught = (state.Catch ?? []).find((c) => names(c.ErrorEquals));
    return 1 + (caught ? walk({ machine: task.machine, state: caught.Next }, UNKNOWN) : 0);
  }
  const doc = place(UNKNOWN, state.ResultPath, outcome.result);
  if (state.End) return 1 + (task.machine === 'cruise' ? afterWindow(doc, 0) : 0);
  return 1 + walk({ machine: task.machine, state: state.Next! }, doc);
}

/** Every Lambda Task of both definitions (for the test that walks them all). */
export function lambdaTasks(): TaskRef[] {
  return (Object.keys(MACHINES) as Array<TaskRef['machine']>).flatMap((machine) =>
    Object.entries(MACHINES[machine].States)
      .filter(([, s]) => isLambdaTask(s))
      .map(([state]) => ({ machine, state })),
  );
}
