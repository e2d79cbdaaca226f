/**
 * The run spec: what a user submits to start a test run (YAML or JSON), checked against the
 * deployment's limits and allow-lists (architecture §3 Admit, §7). validateSpec returns every problem at
 * once, each with a dotted path and a message naming the rule or limit, so a spec is fixed in one pass.
 * Field names follow k6-operator's TestRun where the idea is the same (parallelism, separate,
 * arguments, script.configMap, runner).
 */
import * as z from 'zod';
import { allowedServiceAccounts, DEFAULT_SERVICE_ACCOUNT, namespaceNames, type DeploymentConfig } from './config';
import { SpecInvalid, type Problem } from './errors';
import { CleanupPolicy, Engine, NotifyPolicy, NotifyWhen, RunnerRestartPolicy, SetupTeardown, WhenBusy } from './status';
import { defaultTotalSeconds, maxTotalSeconds } from './deadlines';
import { costCapProblem } from './runner-cost';
import { formatDuration, parseDuration } from './duration';
import { capProblems, describeKind, describeValue, escapeText, excerpt } from './excerpt';
import { checkK6ScriptSyntax } from './script-syntax';
import { engineRules } from './engine-rules';
import { MAX_SPEC_DEPTH } from './spec-text';
import { COMMON_MOUNT_PATHS } from './runner-contract';
import { MAX_CLUSTERS, placementsOf, type ClusterRef, type ClusterShare } from './placements';
import { REGRESSION_FIGURES, type RegressionFigure } from './regression';
import { LAST_SUCCEEDED, regressionLimitProblem } from './regression-limits';
import { isValidRunId } from './run-id';
import { CpuStarvedPolicy, droppedLimitProblem } from './fidelity-rule';
import {
  runnerAffinity,
  runnerImagePullSecrets,
  runnerTopologySpreadConstraints,
  runnerVolumeMounts,
  runnerVolumeProblems,
  runnerVolumes,
} from './runner-pod-fields';

export { parseSpecText } from './spec-text';

// ---- Kubernetes syntax (apimachinery's validation rules, as messages a user can act on) ----

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const QUANTITY = /^(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?$/;
/** A container image reference: [registry[:port]/]path[:tag][@sha256:digest]. */
const IMAGE_REFERENCE =
  /^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*(:\d+)?\/)?[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*(\/[a-z0-9]+(([._]|__|-+)[a-z0-9]+)*)*(:\w[\w.-]{0,127})?(@sha256:[a-f0-9]{64})?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Env vars loadplane sets on every pod itself (e.g. LOADPLANE_START_AT, LOADPLANE_RESULT_FILE). */
const RESERVED_ENV_PREFIX = 'LOADPLANE_';
/** A Secret or ConfigMap key (apimachinery IsConfigMapKey). */
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
/** Most `envFrom` entries (whole Secrets or ConfigMaps) one spec may name. */
export const MAX_ENV_FROM = 16;
/** Labels loadplane puts on every object it owns (architecture §7); a user label must not fake them. */
const RESERVED_LABEL_PREFIX = 'loadplane.io/';
const RESERVED_LABEL_KEYS = ['app.kubernetes.io/managed-by'];
const MAX_LABELS = 32;
/** Kubernetes' limit on all annotations of one object together. */
const MAX_ANNOTATION_BYTES = 256 * 1024;
const MAX_NAME_LENGTH = 40;
/** Most runs one concurrency group may hold slots for at once. */
export const MAX_GROUP_LIMIT = 100;
/** How long a queued run waits for a slot when its spec does not say (capped by maxQueueSeconds). */
const DEFAULT_QUEUE_SECONDS = 60 * 60;
const MAX_CHANNEL_NAME_LENGTH = 40;

const SCRIPT_FILE: Record<Engine, { pattern: RegExp; rule: string }> = {
  k6: { pattern: /^[A-Za-z0-9_][A-Za-z0-9._-]*\.(js|mjs|ts)$/, rule: 'a script file name like script.js (.js, .mjs or .ts)' },
  gatling: {
    // Not .kt: the Gatling bundle compiles only .java and .scala (gatling-compiler ZincCompiler, 3.10).
    pattern: /^[A-Za-z_][A-Za-z0-9_]*\.(java|scala)$/,
    rule: 'a simulation file name like BasicSimulation.java (.java or .scala, named after the class)',
  },
};
/** A ConfigMap key, for when the engine is unknown (the engine field then reports its own problem). */
const CONFIGMAP_KEY = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;
const DEFAULT_K6_FILENAME = 'script.js';

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** Why a label/annotation key is not a Kubernetes qualified name (`[prefix/]name`), or undefined. */
function qualifiedKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return `key ${excerpt(key)} may contain at most one '/' (prefix/name)`;
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  const prefix = parts.length === 2 ? parts[0]! : undefined;
  if (prefix !== undefined && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `key ${excerpt(key)}: prefix must be a DNS subdomain (lowercase, e.g. example.com), at most 253 characters`;
  }
  if (name.length > 63) return `key ${excerpt(key)}: name part must be at most 63 characters, got ${name.length}`;
  if (!QUALIFIED_NAME.test(name)) {
    return `key ${excerpt(key)}: name part must be letters, digits, '-', '_' or '.', starting and ending with a letter or digit`;
  }
  return undefined;
}

function reservedLabelProblem(key: string): string | undefined {
  if (key.startsWith(RESERVED_LABEL_PREFIX) || RESERVED_LABEL_KEYS.includes(key)) {
    return `key ${excerpt(key)} is reserved for loadplane (${RESERVED_LABEL_PREFIX}*, ${RESERVED_LABEL_KEYS.join(', ')})`;
  }
  return undefined;
}

/** A string schema whose value is checked by `problem` (undefined = fine). */
function checkedString(problem: (value: string) => string | undefined) {
  return z.string().check((ctx) => {
    const message = problem(ctx.value);
    if (message) ctx.issues.push({ code: 'custom', message, input: ctx.value });
  });
}

const labelKey = checkedString((key) => qualifiedKeyProblem(key));
const userLabelKey = checkedString((key) => qualifiedKeyProblem(key) ?? reservedLabelProblem(key));
const labelValue = checkedString((value) => {
  if (value.length > 63) return `must be at most 63 characters (Kubernetes label value), got ${value.length}`;
  if (!LABEL_VALUE.test(value)) {
    return "must be empty or letters, digits, '-', '_' or '.', starting and ending with a letter or digit (Kubernetes label value)";
  }
  return undefined;
});
const dnsSubdomain = checkedString((value) =>
  value.length <= 253 && DNS_SUBDOMAIN.test(value)
    ? undefined
    : 'must be a Kubernetes name: lowercase letters, digits, - and ., starting and ending alphanumeric, at most 253 characters',
);

/** A Secret or ConfigMap key, as apimachinery's IsConfigMapKey checks it. */
const configKey = checkedString((value) => {
  if (value.length === 0 || value.length > 253 || !CONFIG_KEY.test(value)) {
    return "must be a Secret/ConfigMap key: letters, digits, '-', '_' or '.', at most 253 characters";
  }
  if (value === '.' || value === '..' || value.startsWith('..')) return "must not be '.' or '..' or start with '..'";
  return undefined;
});

/** `{ name, key, optional? }` of `env.<NAME>.secretKeyRef` / `configMapKeyRef` (Kubernetes' SecretKeySelector). */
const keySelector = z
  .strictObject({ name: dnsSubdomain, key: configKey, optional: z.boolean().optional() })
  .transform((r) => ({ name: r.name, key: r.key, ...(r.optional === undefined ? {} : { optional: r.optional }) }));

/**
 * An env value loadplane never reads: the kubelet resolves it from a Secret or ConfigMap in the run's
 * namespace when it starts the container (Kubernetes' EnvVarSource, its two namespaced kinds).
 */
const envSource = z
  .strictObject({ secretKeyRef: keySelector.optional(), configMapKeyRef: keySelector.optional() })
  .check((ctx) => {
    const count = (ctx.value.secretKeyRef ? 1 : 0) + (ctx.value.configMapKeyRef ? 1 : 0);
    if (count !== 1) ctx.issues.push({ code: 'custom', message: 'set exactly one of secretKeyRef or configMapKeyRef', input: ctx.value });
  })
  .transform((s): EnvSource => (s.secretKeyRef ? { secretKeyRef: s.secretKeyRef } : { configMapKeyRef: s.configMapKeyRef! }));

export type KeySelector = { name: string; key: string; optional?: boolean };
/** A referenced env value: the name of a Secret or ConfigMap in the run's namespace and its key. */
export type EnvSource = { secretKeyRef: KeySelector } | { configMapKeyRef: KeySelector };
/** One `envFrom` entry: every key of a Secret or ConfigMap as an env var, its name after `prefix`. */
export type EnvFromSource = ({ secretRef: { name: string; optional?: boolean } } | { configMapRef: { name: string; optional?: boolean } }) & {
  prefix?: string;
};

const envValue = z.union([z.string(), envSource], {
  error: (issue) =>
    typeof issue.input === 'number' || typeof issue.input === 'boolean'
      ? `expected a string, got ${typeof issue.input} ${String(issue.input)} (quote it in YAML)`
      : `must be a string, { secretKeyRef: { name, key } } or { configMapKeyRef: { name, key } }, got ${describeValue(issue.input)}`,
});

/** Labels on the run's objects: at most MAX_LABELS, reserved keys refused. */
const userLabels = z.record(userLabelKey, labelValue).check((ctx) => {
  const count = Object.keys(ctx.value).length;
  if (count > MAX_LABELS) {
    ctx.issues.push({ code: 'custom', message: `must have at most ${MAX_LABELS} entries, got ${count}`, input: ctx.value });
  }
});

const annotations = z.record(labelKey, z.string()).check((ctx) => {
  const bytes = Object.entries(ctx.value).reduce((sum, [k, v]) => sum + byteLength(k) + byteLength(v), 0);
  if (bytes > MAX_ANNOTATION_BYTES) {
    ctx.issues.push({
      code: 'custom',
      message: `must be at most ${MAX_ANNOTATION_BYTES} bytes in total (Kubernetes annotation limit), got ${bytes}`,
      input: ctx.value,
    });
  }
});

/** A Kubernetes quantity (`500m`, `2`, `512Mi`); YAML numbers are accepted and kept as their string form. */
const quantity = z.custom<string | number>().transform((value, ctx) => {
  if (value === undefined) {
    ctx.issues.push({ code: 'custom', message: 'required', input: value });
    return z.NEVER;
  }
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
  if (typeof text === 'string' && QUANTITY.test(text)) return text;
  ctx.issues.push({
    code: 'custom',
    message: `must be a Kubernetes quantity like 500m, 2, 512Mi or 1Gi, got ${excerpt(value)}`,
    input: value,
  });
  return z.NEVER;
});
const resourceList = z.strictObject({ cpu: quantity.optional(), memory: quantity.optional() });

const toleration = z
  .strictObject({
    key: labelKey.optional(),
    operator: z.enum(['Exists', 'Equal']).optional(),
    value: labelValue.optional(),
    effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
    tolerationSeconds: z.number().int().nonnegative().optional(),
  })
  .check((ctx) => {
    const t = ctx.value;
    const add = (path: string, message: string) => ctx.issues.push({ code: 'custom', message, input: t, path: [path] });
    if (t.operator === 'Exists' && t.value) add('value', "must be empty when operator is 'Exists'");
    if (!t.key && t.operator !== 'Exists') add('operator', "must be 'Exists' when key is empty (tolerate every taint)");
    if (t.tolerationSeconds !== undefined && t.effect !== 'NoExecute') {
      add('effect', "must be 'NoExecute' when tolerationSeconds is set");
    }
  });

// ---- durations ----

/** A duration field, parsed to seconds; `max` bounds it against a config limit. */
function duration(max?: { seconds: number; limit: string }) {
  return z.custom<string | number>().transform((value, ctx) => {
    if (value === undefined) {
      ctx.issues.push({ code: 'custom', message: 'required', input: value });
      return z.NEVER;
    }
    const parsed = parseDuration(value);
    if (!parsed.ok) {
      ctx.issues.push({ code: 'custom', message: parsed.message, input: value });
      return z.NEVER;
    }
    if (max && parsed.seconds > max.seconds) {
      ctx.issues.push({
        code: 'custom',
        message: `must be at most ${formatDuration(max.seconds)} (${max.limit}), got ${formatDuration(parsed.seconds)}`,
        input: value,
      });
      return z.NEVER;
    }
    return parsed.seconds;
  });
}

/** architecture §6's defaults; a deployment whose phase limit is lower caps them. */
const DEFAULT_PREPARE_SECONDS = 10 * 60;
const DEFAULT_READY_SECONDS = 10 * 60;

/**
 * Each phase is bounded by its deployment limit and `total` by their sum, so the longest test
 * (maxRunDurationSeconds) fits after the phases before it, and the state machine's own timeout
 * (stateMachineTimeoutSeconds) is never what ends a run (architecture §6). Without `total`, the run gets
 * its phases together; with one, they must fit in it.
 */
function timeoutsSchema(config: DeploymentConfig) {
  const maxTotal = maxTotalSeconds(config);
  return z
    .strictObject({
      prepare: duration({ seconds: config.maxPrepareSeconds, limit: 'maxPrepareSeconds' }).optional(),
      ready: duration({ seconds: config.maxReadySeconds, limit: 'maxReadySeconds' }).optional(),
      run: duration({ seconds: config.maxRunDurationSeconds, limit: 'maxRunDurationSeconds' }).optional(),
      total: duration({ seconds: maxTotal, limit: 'maxPrepareSeconds + maxReadySeconds + maxRunDurationSeconds' }).optional(),
    })
    .transform((t, ctx) => {
      const phases = {
        prepare: t.prepare ?? Math.min(DEFAULT_PREPARE_SECONDS, config.maxPrepareSeconds),
        ready: t.ready ?? Math.min(DEFAULT_READY_SECONDS, config.maxReadySeconds),
        ...(t.run === undefined ? {} : { run: t.run }),
      };
      const timeouts = { ...phases, total: t.total ?? defaultTotalSeconds(phases, config) };
      // Without `run`, Start adds the expected duration later; what is known must already fit.
      const known = timeouts.prepare + timeouts.ready + (timeouts.run ?? 0);
      if (known > timeouts.total) {
        const terms = `prepare (${formatDuration(timeouts.prepare)}) + ready (${formatDuration(timeouts.ready)})${
          timeouts.run === undefined ? '' : ` + run (${formatDuration(timeouts.run)})`
        }`;
        ctx.issues.push({
          code: 'custom',
          message: `${terms} = ${formatDuration(known)} must not exceed total (${formatDuration(timeouts.total)})`,
          input: t,
          path: ['total'],
        });
      }
      return timeouts;
    })
    .prefault({});
}

// ---- the spec ----

/** What a runner image must hold, per engine (architecture §7): the stock k6 image, or any image with Gatling's launcher. */
const IMAGE_NEEDS: Readonly<Record<Engine, string>> = {
  k6: 'k6 on its PATH (grafana/k6, pinned to a tag)',
  gatling: "gatling.sh on its PATH (st-tech/gatling-operator's runner image is the reference; pin a tag or digest)",
};

/** An image reference to show in a message: the deployment's default, or the reference image for the engine. */
function imageExample(config: DeploymentConfig, engine: Engine | undefined): string {
  const e = engine ?? Engine.k6;
  return config.defaultImages[e] ?? (e === Engine.gatling ? 'ghcr.io/st-tech/gatling:latest' : 'grafana/k6:1.8.1');
}

/** What is wrong with a run's name (`name`; also the API's `?name=` filter), or undefined. */
export function runNameProblem(value: string): string | undefined {
  if (value.length > MAX_NAME_LENGTH) return `must be at most ${MAX_NAME_LENGTH} characters, got ${value.length}`;
  if (!/^[a-z]([a-z0-9-]*[a-z0-9])?$/.test(value)) {
    return "must be lowercase letters, digits and '-', starting with a letter and ending with a letter or digit";
  }
  return undefined;
}

/** The spec's shape for one deployment. `engine` (when the input names a valid one) selects the script file rules. */
function runSpecSchema(config: DeploymentConfig, engine: Engine | undefined) {
  const name = checkedString(runNameProblem);

  const scriptFileName = checkedString((value) => {
    if (engine) return SCRIPT_FILE[engine].pattern.test(value) ? undefined : `must be ${SCRIPT_FILE[engine].rule}`;
    return CONFIGMAP_KEY.test(value) && value.length <= 253 ? undefined : 'must be a file name (letters, digits, ., -, _)';
  });

  const script = z
    .strictObject({
      inline: z
        .string()
        .check((ctx) => {
          const bytes = byteLength(ctx.value);
          if (bytes === 0) ctx.issues.push({ code: 'custom', message: 'must not be empty', input: ctx.value });
          if (bytes > config.maxScriptBytes) {
            ctx.issues.push({
              code: 'custom',
              message: `must be at most ${config.maxScriptBytes} bytes (maxScriptBytes), got ${bytes}`,
              input: ctx.value,
            });
          }
        })
        .optional(),
      filename: scriptFileName.optional(),
      configMap: z.strictObject({ name: dnsSubdomain, file: scriptFileName }).optional(),
    })
    .check((ctx) => {
      const s = ctx.value;
      const add = (message: string, path: string[] = []) => ctx.issues.push({ code: 'custom', message, input: s, path });
      if (s.inline !== undefined && s.configMap !== undefined) {
        add('set exactly one of script.inline or script.configMap, not both');
      } else if (s.inline === undefined && s.configMap === undefined) {
        add('set exactly one of script.inline (the script text) or script.configMap (an existing ConfigMap)');
      }
      if (s.filename !== undefined && s.inline === undefined) add('applies only to script.inline', ['filename']);
      if (engine === Engine.gatling && s.inline !== undefined && s.filename === undefined) {
        add(`required for gatling: ${SCRIPT_FILE.gatling.rule}`, ['filename']);
      }
      const problem = s.inline === undefined ? undefined : scriptTextProblem(s.inline, s.filename);
      if (problem) add(problem, ['inline']);
    })
    .transform((s): { inline: string; filename?: string } | { configMap: { name: string; file: string } } =>
      s.configMap ? { configMap: s.configMap } : { inline: s.inline!, ...(s.filename ? { filename: s.filename } : {}) },
    );

  /** NUL bytes in any script; a k6 JavaScript script must parse as an ES module (k6 loads it as one). */
  function scriptTextProblem(inline: string, filename: string | undefined): string | undefined {
    const nul = inline.indexOf('\0');
    if (nul !== -1) return `must not contain NUL bytes (at line ${lineOf(inline, nul)})`;
    const name = filename ?? DEFAULT_K6_FILENAME;
    if (engine !== Engine.k6 || !SCRIPT_FILE.k6.pattern.test(name)) return undefined;
    const bytes = byteLength(inline);
    if (bytes === 0 || bytes > config.maxScriptBytes) return undefined; // reported by the size check
    const syntax = checkK6ScriptSyntax(inline, name);
    return syntax.ok ? undefined : `syntax error at line ${syntax.line}, column ${syntax.column}: ${escapeText(syntax.message, 120)}`;
  }

  // One check, so a huge value (1e300) is one problem, not zod's safe-integer bound and then ours.
  const parallelism = z.number().check((ctx) => {
    const n = ctx.value;
    const add = (message: string) => ctx.issues.push({ code: 'custom', message, input: n });
    if (!Number.isInteger(n)) add(`must be a whole number, got ${excerpt(n)}`);
    else if (n < 1) add('must be at least 1');
    else if (n > config.maxParallelism) add(`must be at most ${config.maxParallelism} (maxParallelism)`);
  });

  /**
   * The engine's own rules (engineRules(engine).specProblems: flags loadplane sets on every runner,
   * settings that hide the result), checked where the field is, so they come with every other problem.
   */
  const engineProblems = (fields: { arguments: readonly string[]; env: Readonly<Record<string, string | EnvSource>> }) => {
    // A referenced value is the kubelet's to read, not loadplane's: the engine's rules see its name only (null).
    const env = Object.fromEntries(Object.entries(fields.env).map(([name, value]) => [name, typeof value === 'string' ? value : null]));
    return (engine === undefined ? [] : engineRules(engine).specProblems({ arguments: fields.arguments, env })).map(({ path, message }) => ({
      code: 'custom' as const,
      message,
      input: undefined,
      path: path.slice(1),
    }));
  };

  const argument = z.string().check((ctx) => {
    if (ctx.value.includes('\0')) ctx.issues.push({ code: 'custom', message: 'must not contain NUL bytes', input: ctx.value });
  });
  const args = z.array(argument).check((ctx) => {
    ctx.issues.push(...engineProblems({ arguments: ctx.value, env: {} }));
    const add = (message: string) => ctx.issues.push({ code: 'custom', message, input: ctx.value });
    if (ctx.value.length > config.maxArguments) {
      add(`must have at most ${config.maxArguments} entries (maxArguments), got ${ctx.value.length}`);
    }
    const bytes = ctx.value.reduce((sum, a) => sum + byteLength(a), 0);
    if (bytes > config.maxArgumentBytes) {
      add(`must be at most ${config.maxArgumentBytes} bytes in total (maxArgumentBytes), got ${bytes}`);
    }
  });

  const envName = checkedString((key) => {
    if (!ENV_NAME.test(key)) return `name ${excerpt(key)} must match [A-Za-z_][A-Za-z0-9_]*`;
    if (key.startsWith(RESERVED_ENV_PREFIX)) return `name ${excerpt(key)} is reserved (the ${RESERVED_ENV_PREFIX} prefix is loadplane's)`;
    return undefined;
  });

  const envPrefix = checkedString((prefix) => {
    if (!ENV_NAME.test(prefix)) return `prefix ${excerpt(prefix)} must match [A-Za-z_][A-Za-z0-9_]* (it starts every env name it makes)`;
    if (prefix.startsWith(RESERVED_ENV_PREFIX)) return `prefix ${excerpt(prefix)} is reserved (the ${RESERVED_ENV_PREFIX} prefix is loadplane's)`;
    return undefined;
  });
  const objectRef = z
    .strictObject({ name: dnsSubdomain, optional: z.boolean().optional() })
    .transform((r) => ({ name: r.name, ...(r.optional === undefined ? {} : { optional: r.optional }) }));
  /** Kubernetes' EnvFromSource: every key of one Secret or ConfigMap of the run's namespace. */
  const envFromEntry = z
    .strictObject({ secretRef: objectRef.optional(), configMapRef: objectRef.optional(), prefix: envPrefix.optional() })
    .check((ctx) => {
      const count = (ctx.value.secretRef ? 1 : 0) + (ctx.value.configMapRef ? 1 : 0);
      if (count !== 1) ctx.issues.push({ code: 'custom', message: 'set exactly one of secretRef or configMapRef', input: ctx.value });
    })
    .transform((e): EnvFromSource => ({
      ...(e.secretRef ? { secretRef: e.secretRef } : { configMapRef: e.configMapRef! }),
      ...(e.prefix ? { prefix: e.prefix } : {}),
    }));
  const envFrom = z.array(envFromEntry).check((ctx) => {
    if (ctx.value.length > MAX_ENV_FROM) {
      ctx.issues.push({ code: 'custom', message: `must have at most ${MAX_ENV_FROM} entries (MAX_ENV_FROM), got ${ctx.value.length}`, input: ctx.value });
    }
  });

  const image = checkedString((value) => {
    if (!IMAGE_REFERENCE.test(value)) {
      return `must be an image reference like ${imageExample(config, engine)}, got ${excerpt(value)}`;
    }
    return imageAllowListProblem(value, config);
  });

  /** Where loadplane mounts its own volumes in this engine's pods (either engine's when the engine is not known). */
  const loadplaneMountPaths = [...COMMON_MOUNT_PATHS, ...(engine ? [engine] : Object.values(Engine)).flatMap((e) => engineRules(e).podMountPaths)];
  const runner = z
    .strictObject({
      image: image.optional(),
      resources: z.strictObject({ requests: resourceList.optional(), limits: resourceList.optional() }).optional(),
      nodeSelector: z.record(labelKey, labelValue).optional(),
      tolerations: z.array(toleration).optional(),
      serviceAccountName: dnsSubdomain.optional(),
      metadata: z.strictObject({ labels: userLabels.optional(), annotations: annotations.optional() }).optional(),
      volumes: runnerVolumes.optional(),
      volumeMounts: runnerVolumeMounts.optional(),
      affinity: runnerAffinity.optional(),
      topologySpreadConstraints: runnerTopologySpreadConstraints.optional(),
      imagePullSecrets: runnerImagePullSecrets.optional(),
      priorityClassName: dnsSubdomain.optional(),
    })
    // Volumes and mounts are checked together (a mount names a volume), on the raw input: `when` makes
    // the check run even when another runner field is wrong, so every problem comes at once.
    .superRefine(
      (r, ctx) => {
        for (const p of runnerVolumeProblems(r, loadplaneMountPaths)) ctx.addIssue({ code: 'custom', message: p.message, input: r, path: p.path });
      },
      { when: () => true },
    )
    // The pod fields are absent unless given (and not empty), so a spec without them keeps its hash.
    .transform((r) => ({
      image: r.image,
      resources: { requests: r.resources?.requests ?? {}, limits: r.resources?.limits ?? {} },
      nodeSelector: r.nodeSelector ?? {},
      tolerations: r.tolerations ?? [],
      ...(r.serviceAccountName ? { serviceAccountName: r.serviceAccountName } : {}),
      metadata: { labels: r.metadata?.labels ?? {}, annotations: r.metadata?.annotations ?? {} },
      ...(r.volumes?.length ? { volumes: r.volumes } : {}),
      ...(r.volumeMounts?.length ? { volumeMounts: r.volumeMounts } : {}),
      ...(r.affinity && Object.keys(r.affinity).length > 0 ? { affinity: r.affinity } : {}),
      ...(r.topologySpreadConstraints?.length ? { topologySpreadConstraints: r.topologySpreadConstraints } : {}),
      ...(r.imagePullSecrets?.length ? { imagePullSecrets: r.imagePullSecrets } : {}),
      ...(r.priorityClassName ? { priorityClassName: r.priorityClassName } : {}),
    }))
    .prefault({});

  const firstCluster = config.allowedClusters[0]!;
  const defaultCluster: ClusterRef = { name: firstCluster.name, namespace: namespaceNames(firstCluster)[0]! };
  const cluster = z.strictObject({ name: z.string(), namespace: z.string() }).check((ctx) => {
    const problem = clusterProblem(ctx.value, config);
    if (problem) ctx.issues.push({ code: 'custom', message: problem.message, input: ctx.value, path: [problem.field] });
  });
  /** Several clusters, each with its block of the runners (placements.ts), each once; a share is checked as parallelism is. */
  const clusters = z
    .array(
      z.strictObject({ name: z.string(), namespace: z.string(), runners: parallelism }).superRefine(
        (entry, ctx) => {
          const problem = clusterProblem(entry, config);
          if (problem) ctx.addIssue({ code: 'custom', message: problem.message, input: entry, path: [problem.field] });
        },
        // Whatever its share's problem: every problem at once.
        { when: (payload) => !payload.issues.some((issue) => issue.path?.[0] === 'name' || issue.path?.[0] === 'namespace') },
      ),
    )
    .superRefine(
      (list, ctx) => {
        if (list.length === 0) ctx.addIssue({ code: 'custom', message: 'must name at least one cluster', input: list });
        if (list.length > MAX_CLUSTERS)
          ctx.addIssue({ code: 'custom', message: `must name at most ${MAX_CLUSTERS} clusters, got ${list.length}`, input: list });
        const names = list.map((c) => (c as { name?: unknown } | undefined)?.name);
        names.forEach((name, i) => {
          const earlier = names.indexOf(name);
          if (typeof name !== 'string' || earlier === i) return;
          ctx.addIssue({
            code: 'custom',
            path: [i, 'name'],
            input: name,
            message: `names cluster ${excerpt(name)} again (also clusters.${earlier}): give each cluster once, with all its runners`,
          });
        });
      },
      // The entries may have problems of their own (reported at them); the list's are checked anyway.
      { when: (payload) => Array.isArray(payload.value) },
    );

  const channel = checkedString((value) =>
    value.length <= MAX_CHANNEL_NAME_LENGTH && /^(slack|webhook)(-[a-z0-9]+)*$/.test(value)
      ? undefined
      : `must be a channel name: slack, webhook, or slack-<suffix> / webhook-<suffix> (lowercase letters, digits, '-'), at most ${MAX_CHANNEL_NAME_LENGTH} characters`,
  );
  /** A channel by name (it always speaks), or `{ name, when }`. */
  const channelEntry = z.union([channel, z.strictObject({ name: channel, when: z.enum(NotifyWhen).default(NotifyWhen.always) })], {
    error: (issue) =>
      `must be a channel name (slack, webhook, slack-<suffix>, webhook-<suffix>) or { name, when: ${Object.values(NotifyWhen).join(' | ')} }, got ${describeValue(issue.input)}`,
  });
  /** What the run is compared with, and how much worse each figure may get (core/regression.ts). */
  const limitOf = (figure: RegressionFigure) =>
    z.string().check((ctx) => {
      const problem = regressionLimitProblem(figure, ctx.value);
      if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
    });
  const baseline = z.strictObject({
    run: z
      .string()
      .check((ctx) => {
        if (ctx.value !== LAST_SUCCEEDED && !isValidRunId(ctx.value))
          ctx.issues.push({
            code: 'custom',
            message: `must be ${JSON.stringify(LAST_SUCCEEDED)} (the newest SUCCEEDED run of this name, or of its schedule for a scheduled run) or a run id`,
            input: ctx.value,
          });
      })
      .default(LAST_SUCCEEDED),
    limits: z
      .strictObject(Object.fromEntries(REGRESSION_FIGURES.map((f) => [f, limitOf(f).optional()])) as Record<RegressionFigure, z.ZodOptional<z.ZodString>>)
      .check((ctx) => {
        if (Object.values(ctx.value).every((v) => v === undefined))
          ctx.issues.push({ code: 'custom', message: `must limit at least one of ${REGRESSION_FIGURES.join(', ')}`, input: ctx.value });
      }),
  });
  /** When poor load fidelity fails the run (core/fidelity.ts); without it, fidelity is reported only. */
  const fidelity = z.strictObject({
    maxDroppedIterations: z
      .string()
      .check((ctx) => {
        const problem = droppedLimitProblem(ctx.value);
        if (problem) ctx.issues.push({ code: 'custom', message: problem, input: ctx.value });
      })
      .optional(),
    cpuStarved: z.enum(CpuStarvedPolicy).default(CpuStarvedPolicy.warn),
  });
  const notify = z
    .strictObject({
      channels: z
        .array(channelEntry)
        .check((ctx) => {
          const names = ctx.value.map((c) => (typeof c === 'string' ? c : c.name));
          const duplicate = names.find((c, i) => names.indexOf(c) !== i);
          if (duplicate) ctx.issues.push({ code: 'custom', message: `lists ${excerpt(duplicate)} twice`, input: ctx.value });
        })
        .default([]),
      policy: z.enum(NotifyPolicy).default(config.notify.defaultPolicy),
      /** The validated spec's own form of the channels' `when` (so a validated spec validates again, e.g. a schedule's stored spec). */
      when: z.record(channel, z.enum(NotifyWhen)).optional(),
    })
    .check((ctx) => {
      const names = ctx.value.channels.map((c) => (typeof c === 'string' ? c : c.name));
      for (const name of Object.keys(ctx.value.when ?? {})) {
        if (!names.includes(name))
          ctx.issues.push({ code: 'custom', message: `names ${excerpt(name)}, which is not in notify.channels`, input: ctx.value.when, path: ['when'] });
      }
    })
    .prefault({})
    // Channels stay a list of names; `when` holds only the channels that do not always speak, and is
    // absent when there are none (so a spec without it keeps its hash).
    .transform(({ channels, policy, when: given }) => {
      const when = Object.fromEntries(
        [...Object.entries(given ?? {}), ...channels.flatMap((c) => (typeof c === 'string' ? [] : [[c.name, c.when] as const]))].filter(
          ([, w]) => w !== NotifyWhen.always,
        ),
      ) as Record<string, NotifyWhen>;
      return {
        channels: channels.map((c) => (typeof c === 'string' ? c : c.name)),
        policy,
        ...(Object.keys(when).length > 0 ? { when } : {}),
      };
    });

  const group = checkedString(runNameProblem);
  const groupLimit = z.number().check((ctx) => {
    const n = ctx.value;
    const add = (message: string) => ctx.issues.push({ code: 'custom', message, input: n });
    if (!Number.isInteger(n)) add(`must be a whole number, got ${excerpt(n)}`);
    else if (n < 1) add('must be at least 1');
    else if (n > MAX_GROUP_LIMIT) add(`must be at most ${MAX_GROUP_LIMIT}`);
  });
  /** A slot in a named group before anything is launched (architecture §4 concurrency group). */
  const concurrency = z.strictObject({
    group,
    limit: groupLimit.default(1),
    whenBusy: z.enum(WhenBusy).default(WhenBusy.queue),
    queueTimeout: duration({ seconds: config.maxQueueSeconds, limit: 'maxQueueSeconds' }).default(Math.min(DEFAULT_QUEUE_SECONDS, config.maxQueueSeconds)),
  });

  return (
    z
      .strictObject({
        name,
        engine: z.enum(Engine),
        script,
        parallelism: parallelism.optional(),
        separate: z.boolean().default(false),
        arguments: args.default([]),
        env: z
          .record(envName, envValue)
          .check((ctx) => {
            ctx.issues.push(...engineProblems({ arguments: [], env: ctx.value }));
          })
          .default({}),
        envFrom: envFrom.optional(),
        runner,
        cluster: cluster.optional(),
        clusters: clusters.optional(),
        timeouts: timeoutsSchema(config),
        notify,
        concurrency: concurrency.optional(),
        cleanup: z.enum(CleanupPolicy).default(CleanupPolicy.always),
        onRunnerRestart: z.enum(RunnerRestartPolicy).default(RunnerRestartPolicy.fail),
        setupTeardown: z.enum(SetupTeardown).optional(),
        baseline: baseline.optional(),
        fidelity: fidelity.optional(),
        labels: userLabels.default({}),
      })
      .check((ctx) => {
        if (ctx.value.engine !== Engine.gatling || ctx.value.setupTeardown === undefined) return;
        ctx.issues.push({
          code: 'custom',
          path: ['setupTeardown'],
          input: ctx.value.setupTeardown,
          message: "k6 only: Gatling's before/after hooks run in each runner's JVM; remove the field",
        });
      })
      // How many runners, and where: checked whatever other fields' problems (so they come with them).
      .superRefine((spec, ctx) => placementProblems(spec, config).forEach((issue) => ctx.addIssue({ code: 'custom', ...issue })), { when: () => true })
      // The runners' service account depends on where they run: checked once cluster and runner are
      // read, whatever other fields' problems (so it comes with them).
      .superRefine(
        (spec, ctx) => {
          for (const where of clusterRefsOf(spec, defaultCluster)) {
            const problem = clusterProblem(where, config) ? undefined : serviceAccountProblem({ cluster: where, runner: spec.runner }, config);
            if (problem) {
              ctx.addIssue({ code: 'custom', path: ['runner', 'serviceAccountName'], input: spec.runner.serviceAccountName, message: problem });
              return;
            }
          }
        },
        {
          when: (payload) => !payload.issues.some((issue) => issue.path?.[0] === 'cluster' || issue.path?.[0] === 'clusters' || issue.path?.[0] === 'runner'),
        },
      )
      .check((ctx) => {
        if (ctx.value.runner.image !== undefined || config.defaultImages[ctx.value.engine] !== undefined) return;
        ctx.issues.push({
          code: 'custom',
          path: ['runner', 'image'],
          input: undefined,
          message: `required for ${ctx.value.engine}: this deployment has no default ${ctx.value.engine} image; name one with ${IMAGE_NEEDS[ctx.value.engine]}, e.g. ${imageExample(config, ctx.value.engine)}`,
        });
      })
      // `envFrom` is absent unless it names something, so a spec without it keeps its hash.
      .transform(({ envFrom: given, cluster: oneCluster, clusters: several, parallelism: _given, ...spec }) => ({
        ...spec,
        ...placedFields({ cluster: oneCluster, clusters: several, parallelism: _given }, defaultCluster),
        ...(given && given.length > 0 ? { envFrom: given } : {}),
        script: 'inline' in spec.script ? { inline: spec.script.inline, filename: spec.script.filename ?? DEFAULT_K6_FILENAME } : spec.script,
        runner: { ...spec.runner, image: (spec.runner.image ?? config.defaultImages[spec.engine])! },
      }))
  );
}

// ---- where the runners run (placements.ts) ----

/** The spec's placement fields as validated: `parallelism` is missing only when `clusters` gives it. */
interface PlacementFields {
  parallelism?: number | undefined;
  cluster?: ClusterRef | undefined;
  clusters?: ClusterShare[] | undefined;
}

/** Exactly one of `cluster` and `clusters` is set. */
interface PlacedFields {
  parallelism: number;
  cluster?: ClusterRef;
  clusters?: ClusterShare[];
}

/**
 * The validated spec's own form, which validates again unchanged (a schedule's stored spec): one
 * cluster as `cluster` with `parallelism` (a `clusters` of one entry is that run, and takes its form,
 * so it has the same hash), several as `clusters` with `parallelism` their sum.
 */
function placedFields(fields: PlacementFields, defaultCluster: ClusterRef): PlacedFields {
  const several = fields.clusters;
  if (several && several.length > 1) return { parallelism: several.reduce((sum, c) => sum + c.runners, 0), clusters: several };
  if (several && several.length === 1) return { parallelism: several[0]!.runners, cluster: { name: several[0]!.name, namespace: several[0]!.namespace } };
  return { parallelism: fields.parallelism!, cluster: fields.cluster ?? defaultCluster };
}

/** The clusters and namespaces a spec's runners go to (before the transform: either field, or the default). */
function clusterRefsOf(fields: PlacementFields, defaultCluster: ClusterRef): ClusterRef[] {
  if (fields.clusters && fields.clusters.length > 0) return fields.clusters;
  return [fields.cluster ?? defaultCluster];
}

/**
 * How many runners and where, as a whole: `cluster` or `clusters`, not both; `parallelism` required
 * with one cluster, and with several, when given, the sum of their runners, which maxParallelism
 * bounds. Read from a value whose fields may have problems of their own (reported where they are).
 */
function placementProblems(value: unknown, config: DeploymentConfig): { path: string[]; message: string; input: unknown }[] {
  const spec = value as { parallelism?: unknown; cluster?: unknown; clusters?: unknown };
  const problems: { path: string[]; message: string; input: unknown }[] = [];
  if (spec.cluster !== undefined && spec.clusters !== undefined) {
    problems.push({
      path: ['clusters'],
      input: spec.clusters,
      message: 'give either cluster (one cluster) or clusters (several, each with its runners), not both',
    });
  }
  if (spec.clusters === undefined) {
    if (spec.parallelism === undefined) problems.push({ path: ['parallelism'], input: undefined, message: 'required' });
    return problems;
  }
  if (!Array.isArray(spec.clusters)) return problems;
  const shares = spec.clusters.map((c) => (c as { runners?: unknown } | null)?.runners);
  if (!shares.every((n): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 1)) return problems;
  const sum = shares.reduce((a, b) => a + b, 0);
  if (sum > config.maxParallelism) {
    problems.push({ path: ['clusters'], input: spec.clusters, message: `runners add up to ${sum}: at most ${config.maxParallelism} (maxParallelism)` });
  }
  if (typeof spec.parallelism === 'number' && spec.parallelism !== sum) {
    problems.push({
      path: ['parallelism'],
      input: spec.parallelism,
      message: `must equal the runners of clusters together (${sum}), got ${excerpt(spec.parallelism)}; or leave it out`,
    });
  }
  return problems;
}

// ---- the deployment's allow-lists ----

/** Why runs may not use `cluster` (the field at fault, `name` or `namespace`), or undefined. */
function clusterProblem(cluster: { name: string; namespace: string }, config: DeploymentConfig): { field: 'name' | 'namespace'; message: string } | undefined {
  const allowed = config.allowedClusters.find((c) => c.name === cluster.name);
  if (!allowed) {
    const names = config.allowedClusters.map((c) => c.name).join(', ');
    return { field: 'name', message: `cluster ${excerpt(cluster.name)} is not on the allow-list (allowed clusters: ${names})` };
  }
  const namespaces = namespaceNames(allowed);
  if (namespaces.includes(cluster.namespace)) return undefined;
  return {
    field: 'namespace',
    message: `namespace ${excerpt(cluster.namespace)} is not allowed in cluster ${excerpt(cluster.name)} (allowed namespaces: ${namespaces.join(', ')})`,
  };
}

/** Why runner pods may not run as the spec's service account (its namespace's `default` when it names none), or undefined. */
function serviceAccountProblem(
  spec: { cluster: { name: string; namespace: string }; runner: { serviceAccountName?: string } },
  config: DeploymentConfig,
): string | undefined {
  const allowed = config.allowedClusters.find((c) => c.name === spec.cluster.name);
  const accounts = allowed && allowedServiceAccounts(allowed, spec.cluster.namespace);
  if (!accounts) return undefined; // the cluster's own problem
  const named = spec.runner.serviceAccountName;
  if (accounts.includes(named ?? DEFAULT_SERVICE_ACCOUNT)) return undefined;
  const where = `cluster ${excerpt(spec.cluster.name)}, namespace ${excerpt(spec.cluster.namespace)}`;
  const list = `(allowed service accounts: ${accounts.join(', ')})`;
  return named === undefined
    ? `required here: the namespace's ${DEFAULT_SERVICE_ACCOUNT} service account, which runners get when none is named, is not allowed in ${where} ${list}`
    : `service account ${excerpt(named)} is not allowed in ${where} ${list}`;
}

/** Why `image` is not on the deployment's image allow-list, or undefined. */
function imageAllowListProblem(image: string, config: DeploymentConfig): string | undefined {
  if (config.allowedImagePrefixes.some((prefix) => image.startsWith(prefix))) return undefined;
  return `image ${excerpt(image)} is not on the allow-list (allowed prefixes: ${config.allowedImagePrefixes.join(', ')})`;
}

/**
 * A validated spec held to the deployment's allow-lists as they are now (cluster and namespace, the
 * runners' service account, the image): a run validated before a deploy narrowed them is refused when
 * it is admitted. Every problem, as validateSpec reports them.
 */
export function allowListProblems(spec: Pick<RunSpec, 'cluster' | 'clusters' | 'parallelism' | 'runner' | 'timeouts'>, config: DeploymentConfig): Problem[] {
  const problems: Problem[] = [];
  let serviceAccount: string | undefined;
  placementsOf(spec).forEach((where, i) => {
    const cluster = clusterProblem(where, config);
    const at = spec.clusters ? `clusters.${i}` : 'cluster';
    if (cluster) problems.push({ path: `${at}.${cluster.field}`, message: cluster.message });
    else serviceAccount ??= serviceAccountProblem({ cluster: where, runner: spec.runner }, config);
  });
  if (serviceAccount) problems.push({ path: 'runner.serviceAccountName', message: serviceAccount });
  const image = imageAllowListProblem(spec.runner.image, config);
  if (image) problems.push({ path: 'runner.image', message: image });
  return [...problems, ...costCapProblems(spec, config)];
}

/** A run spec as written by a user (durations as strings or seconds, defaults omitted). */
export type RunSpecInput = z.input<ReturnType<typeof runSpecSchema>>;
/** A validated run spec: defaults applied (image, cluster, timeouts, policies), durations in seconds. */
export type RunSpec = z.output<ReturnType<typeof runSpecSchema>>;

/**
 * A validated spec read without its inline script's text (architecture §4: the text lives in chunk items,
 * and only the stages that make the script ConfigMap read it): `script.inline` is absent, the file
 * name is kept. Not assignable to RunSpec, so nothing that needs the text can be given this one.
 */
export type RunSpecWithoutScript = Omit<RunSpec, 'script'> & {
  script: { filename: string; inline?: never } | Extract<RunSpec['script'], { configMap: unknown }>;
};

export type SpecValidation = { ok: true; spec: RunSpec } | { ok: false; problems: Problem[] };

/** Checks a parsed spec (from YAML, JSON or a request body) against schema, limits and allow-lists. */
export function validateSpec(input: unknown, config: DeploymentConfig): SpecValidation {
  const tooDeep = nestingProblem(input);
  if (tooDeep) return { ok: false, problems: [tooDeep] };
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, problems: [{ path: '(root)', message: `a run spec is a mapping (object) of fields, got ${describeKind(input)}` }] };
  }
  const named = (input as { engine?: unknown }).engine;
  const engine = Object.values(Engine).find((e) => e === named);
  const schema = runSpecSchema(config, engine);
  const fields = Object.keys(input);
  const known = allowedKeys(schema.in);
  if (fields.length > 0 && !fields.some((field) => known.includes(field))) {
    // Some other file (a config, /etc/passwd): its keys are not listed back, they are its content.
    const message = `not a run spec: none of its ${fields.length} top-level fields is a spec field (${known.join(', ')})`;
    return { ok: false, problems: [{ path: '(root)', message }] };
  }
  const parsed = schema.safeParse(input, { error: friendlyMessage });
  if (!parsed.success) return { ok: false, problems: capProblems(toProblems(parsed.error.issues)) };
  const tooLarge = storedSizeProblem(parsed.data);
  if (tooLarge) return { ok: false, problems: [tooLarge] };
  const overCap = costCapProblems(parsed.data, config);
  return overCap.length > 0 ? { ok: false, problems: overCap } : { ok: true, spec: parsed.data };
}

/** The deployment's maxRunCostUsd against the runners' estimate (core/runner-cost.ts): the spec as a whole. */
function costCapProblems(spec: Pick<RunSpec, 'parallelism' | 'runner' | 'timeouts'>, config: DeploymentConfig): Problem[] {
  const message = costCapProblem(spec, config);
  return message ? [{ path: '(root)', message }] : [];
}

/**
 * Most bytes of a spec besides its inline script (env, arguments, labels, annotations, …). The run is
 * one DynamoDB item, at most 400 KB with its status, deadlines and result totals; the inline script
 * lives in chunk items of its own (architecture §4), the rest of the spec does not.
 */
export const MAX_SPEC_FIELDS_BYTES = 256 * 1024;

/** The rest of a spec past MAX_SPEC_FIELDS_BYTES, named by its largest top-level field. */
function storedSizeProblem(spec: RunSpec): Problem | undefined {
  const fields = Object.entries(spec).map(([name, value]) => {
    const stored = name === 'script' && 'inline' in (value as object) ? { ...(value as object), inline: '' } : value;
    return { name, bytes: Buffer.byteLength(JSON.stringify(stored) ?? '', 'utf8') };
  });
  const total = fields.reduce((sum, f) => sum + f.bytes, 0);
  if (total <= MAX_SPEC_FIELDS_BYTES) return undefined;
  const largest = fields.reduce((a, b) => (b.bytes > a.bytes ? b : a));
  return {
    path: largest.name,
    message: `is ${largest.bytes} bytes; a spec's fields besides its inline script may take at most ${MAX_SPEC_FIELDS_BYTES} bytes in all (${total} here): put large data in the script or a ConfigMap`,
  };
}

/** Values visited at most by nestingProblem (a 1 MiB spec has far fewer; shared YAML aliases could have more). */
const MAX_VISITED_VALUES = 1_000_000;

/**
 * The first place where `input` is nested deeper than MAX_SPEC_DEPTH, checked iteratively before the
 * schema (or anything recursive) walks it. A recursive YAML alias (`&a [*a]`) is infinitely deep.
 */
function nestingProblem(input: unknown): Problem | undefined {
  const stack: Array<{ value: unknown; path: string[] }> = [{ value: input, path: [] }];
  let visited = 0;
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (path.length >= MAX_SPEC_DEPTH) {
      return { path: formatPath(path.slice(0, 3)), message: `nested deeper than ${MAX_SPEC_DEPTH} levels` };
    }
    if (++visited > MAX_VISITED_VALUES) return { path: '(root)', message: `has more than ${MAX_VISITED_VALUES} values` };
    for (const [key, child] of Object.entries(value)) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, path: [...path, key] });
    }
  }
  return undefined;
}

function lineOf(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** validateSpec for callers that stop on the first invalid spec: throws SpecInvalid with every problem. */
export function assertValidSpec(input: unknown, config: DeploymentConfig): RunSpec {
  const result = validateSpec(input, config);
  if (!result.ok) throw new SpecInvalid(result.problems);
  return result.spec;
}

// ---- messages ----

/** zod's defaults ("Invalid input: expected string, received undefined") rewritten for spec authors. */
const friendlyMessage: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case 'invalid_type':
      if (issue.input === undefined) return 'required';
      if (issue.expected === 'int') return `must be a whole number, got ${excerpt(issue.input)}`;
      if (issue.expected === 'number' && typeof issue.input === 'number') return `must be a finite number, got ${issue.input}`;
      if (issue.expected === 'string' && (typeof issue.input === 'number' || typeof issue.input === 'boolean')) {
        return `expected a string, got ${typeof issue.input} ${String(issue.input)} (quote it in YAML)`;
      }
      return `expected ${describeExpected(issue.expected)}, got ${describeValue(issue.input)}`;
    case 'invalid_value':
      if (issue.input === undefined) return `required: one of ${issue.values.map(String).join(', ')}`;
      return `must be one of ${issue.values.map(String).join(', ')}; got ${excerpt(issue.input)}`;
    case 'too_big':
      return `must be at most ${String(issue.maximum)}`;
    case 'too_small':
      return `must be at least ${String(issue.minimum)}`;
    case 'unrecognized_keys':
      return `unknown field (allowed: ${allowedKeys(issue.inst).join(', ')})`;
    default:
      return undefined;
  }
};

function describeExpected(expected: string): string {
  if (expected === 'object' || expected === 'record') return 'a mapping (object)';
  if (expected === 'array') return 'a list';
  if (expected === 'boolean') return 'true or false';
  return `a ${expected}`;
}

function allowedKeys(schema: unknown): string[] {
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

/** Kubernetes' field names reach 48 characters (requiredDuringSchedulingIgnoredDuringExecution): a field-like segment is not cut as an excerpt is. */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9]{0,63}$/;

function formatSegment(segment: string): string {
  return FIELD_NAME.test(segment) ? segment : escapeText(segment);
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '(root)' : path.map((segment) => formatSegment(String(segment))).join('.');
}

/** One Problem per offending field: unknown keys are split per key, record-key issues keep their own message. */
function toProblems(issues: readonly z.core.$ZodIssue[]): Problem[] {
  return issues.flatMap((issue): Problem[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({ path: formatPath([...issue.path, key]), message: issue.message }));
    }
    if (issue.code === 'invalid_union' && issue.errors.length > 0) {
      // The branch of the value's own kind speaks (`{ name, when }` for an object, a name for a string).
      const branch = issue.errors.find((branchIssues) => !branchIssues.some((i) => i.code === 'invalid_type' && i.path.length === 0));
      if (branch) return toProblems(branch.map((i) => ({ ...i, path: [...issue.path, ...i.path] })));
    }
    if (issue.code === 'invalid_key') {
      return [{ path: formatPath(issue.path), message: issue.issues.map((i) => i.message).join('; ') }];
    }
    return [{ path: formatPath(issue.path), message: issue.message }];
  });
}

/** The spec's schema for documentation (the API's OpenAPI document): either engine, as written (`io: 'input'`). */
export function runSpecDocumentationSchema(config: DeploymentConfig) {
  return runSpecSchema(config, undefined);
}

/** Where the run's setup() and teardown() run: the spec's `setupTeardown`, for k6 `perRun` unless it says `perRunner`; an engine without them, `perRunner` (their hooks run in each runner). */
export function setupTeardownOf(spec: Pick<RunSpec, 'engine' | 'setupTeardown'>): SetupTeardown {
  return spec.engine === Engine.k6 ? (spec.setupTeardown ?? SetupTeardown.perRun) : SetupTeardown.perRunner;
}

/** The run has k6's coordinator pod (setup() and teardown() once per run: engines/k6/coordinator.ts). */
export function hasCoordinator(spec: Pick<RunSpec, 'engine' | 'setupTeardown'>): boolean {
  return setupTeardownOf(spec) === SetupTeardown.perRun;
}
