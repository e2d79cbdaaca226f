/**
 * The fixed POSIX-sh scripts every loadplane pod runs inside the engine's unmodified stock image
 * (grafana/k6: alpine + busybox sh; Gatling: a user image with `gatling.sh`, dash or bash as sh).
 * The engine's argv is passed as positional parameters and never evaluated by the shell:
 *
 *   command: shellCommand(RUNNER_SCRIPT, RUNNER_SCRIPT_NAME)   // ['sh', '-c', RUNNER_SCRIPT, 'loadplane-runner']
 *   args:    ['k6', 'run', '--quiet', ..., '/loadplane/scripts/test.js']   // becomes "$@"
 *
 * Both scripts are tested with dash, busybox sh and bash --posix (test/engines/pod-scripts.test.ts).
 */
import {
  CPU_STAT_LINE_PREFIX,
  ENV_ARCHIVE,
  ENV_CPU_STAT_FILES,
  ENV_RESULT_FILE,
  ENV_START_AT_EPOCH,
  POD_SHELL,
  REQUIREMENTS_MARKER,
  RESULT_LINE_PREFIX,
} from '../core/runner-contract';

/** `$0` of the runner script (shows up in the shell's own error messages). */
export const RUNNER_SCRIPT_NAME = 'loadplane-runner';
/** `$0` of the k6 initializer script. */
export const INITIALIZER_SCRIPT_NAME = 'loadplane-initializer';

/**
 * The runner pod's script; `"$@"` is the engine's argv.
 *
 * 1. If `$LOADPLANE_START_AT_EPOCH` is non-empty (whole epoch seconds, else exit 64), wait until
 *    `date +%s` reaches it: the bulk in one background `sleep` (so TERM/INT can stop the wait), then
 *    `sleep 0.05` polls (`sleep 1` where fractional sleep fails) so the start lands on the second.
 *    A TERM/INT during the wait exits 128+n without running the engine (and stops the `sleep`).
 * 2. Runs `"$@"` as a background child with stdout/stderr inherited. The shell is PID 1 in the pod,
 *    so it traps TERM and INT and forwards the same signal to the child. A trapped signal makes
 *    `wait` return >128 at once, so the script waits again until the child's real status is known;
 *    when the trap ran just after `wait` had already reported the real status, the next `wait`
 *    returns 127 (unknown pid) and the earlier status is kept. Exit code = the child's (a child
 *    killed by signal n gives 128+n; a command that cannot be found gives 127, as from any shell).
 *    Between fork and exec the child is still a copy of the shell: dash and busybox let it catch
 *    and drop a signal sent then (measured: ~90% of `sleep 1 & kill $!` kills lost; bash loses
 *    none). So a signal that arrives before the child has exec'd (its /proc/<pid>/cmdline is no
 *    longer the shell's, checked with `cmp`; up to ~1 s) is held back and forwarded right after.
 * 3. If `$LOADPLANE_CPU_STAT_FILES` names a readable file (the first of its space-separated paths that
 *    is), reads it just before the engine starts and again once it has exited, and prints, last (after
 *    the result line of 4: a large export spans many log records and Collect reads the log's tail), a
 *    newline, then `LOADPLANE_CPU_STAT start ` + the first reading + ` end ` + the second, each with
 *    its lines joined by single spaces, then a newline: the container's CPU time and throttling over
 *    the test (cgroup `cpu.stat`, core/cpu-throttling.ts). Reading a file is all: no permission is needed.
 * 4. If `$LOADPLANE_RESULT_FILE` is non-empty: when the file is non-empty, prints a newline, then
 *    `LOADPLANE_RESULT ` + the file's content with CR/LF removed, then a newline (k6's summary export
 *    is pretty-printed JSON whose strings never hold raw newlines); otherwise one note on stderr.
 *
 * POSIX rules every shell applies to a background child without job control, and so to the engine:
 * its stdin is /dev/null (as in a pod without `stdin: true` anyway), and it starts with SIGINT and
 * SIGQUIT ignored. A forwarded INT therefore reaches engines that install their own SIGINT handler
 * (k6 does, as Go's signal.Notify does; so does node) but not ones that keep an inherited
 * ignored SIGINT ignored (the JVM does). Kubernetes stops pods with TERM, which always arrives.
 */
export const RUNNER_SCRIPT = `set -u
[ $# -gt 0 ] || { echo '${RUNNER_SCRIPT_NAME}: no command given' >&2; exit 64; }
state=waiting stop= sleeper= child= pending= signalled=
# TERM/INT: before the engine starts, stop (exit 128+n); while it runs, forward the signal to it.
on_signal() {
  signalled=1
  case $state in
    waiting) stop=$((128 + $2)); [ -z "$sleeper" ] || kill -9 "$sleeper" 2>/dev/null ;;
    starting) pending=$1 ;;
    running) kill -"$1" "$child" 2>/dev/null ;;
  esac
}
trap 'on_signal TERM 15' TERM
trap 'on_signal INT 2' INT
# Common start: wait until date +%s >= $${ENV_START_AT_EPOCH} (whole epoch seconds).
at=\${${ENV_START_AT_EPOCH}:-}
if [ -n "$at" ]; then
  at=\${at#"\${at%%[!0]*}"}; at=\${at:-0}   # no leading zeros: $((...)) would read them as octal
  case $at in *[!0-9]*|????????????*)
    printf 'loadplane: ${ENV_START_AT_EPOCH} must be whole epoch seconds, not "%s"\\n' "$${ENV_START_AT_EPOCH}" >&2; exit 64 ;;
  esac
  now=$(date +%s)
  if [ "$now" -lt "$at" ]; then
    echo "loadplane: waiting for the common start at $at (now $now)" >&2
    if [ $((at - now)) -gt 1 ]; then
      sleep $((at - now - 1)) & sleeper=$!
      [ -z "$stop" ] || kill -9 "$sleeper"   # the signal came before $! was known
      wait "$sleeper"
    fi
    while [ -z "$stop" ] && [ "$(date +%s)" -lt "$at" ]; do sleep 0.05 2>/dev/null || sleep 1; done
  fi
fi
[ -z "$stop" ] || exit "$stop"
# The container's cgroup cpu.stat just before and just after the engine (the first readable file named).
cpu_file=
for f in \${${ENV_CPU_STAT_FILES}:-}; do [ -r "$f" ] && { cpu_file=$f; break; }; done
cpu_start=
[ -z "$cpu_file" ] || cpu_start=$(cat "$cpu_file" 2>/dev/null)
state=starting
"$@" &
child=$!
# Until it execs, the child is a copy of this shell whose trap would swallow a signal (dash, busybox):
# hold signals back while its /proc cmdline is still ours (no cmp or no /proc: no holding back).
n=0
while [ $n -lt 100 ] && cmp -s /proc/$$/cmdline /proc/$child/cmdline 2>/dev/null; do
  n=$((n + 1)); sleep 0.01 2>/dev/null || sleep 1
done
state=running
[ -z "$pending" ] || kill -"$pending" "$child" 2>/dev/null
# A trapped signal ends wait early (>128): wait again until the child's real status is known.
# 127 from a later wait means the status was already reported: keep that one.
status=
while :; do
  signalled=
  wait "$child" 2>/dev/null; s=$?
  [ -n "$status" ] && [ "$s" -eq 127 ] || status=$s
  [ -n "$signalled" ] || break
done
state=done
cpu_end=
[ -z "$cpu_start" ] || cpu_end=$(cat "$cpu_file" 2>/dev/null)
file=\${${ENV_RESULT_FILE}:-}
if [ -n "$file" ]; then
  if [ -s "$file" ]; then
    printf '\\n%s' '${RESULT_LINE_PREFIX}'
    tr -d '\\r\\n' < "$file"
    printf '\\n'
  else
    printf 'loadplane: %s was not written; no result line\\n' "$file" >&2
  fi
fi
# After the result line: a large export spans many log records, and Collect reads the log's tail.
# Unquoted: each reading's lines of key and value become one line of single-spaced words.
if [ -n "$cpu_start" ]; then
  printf '\\n%s' '${CPU_STAT_LINE_PREFIX}start '; echo $cpu_start end $cpu_end
fi
exit "$status"
`;

/**
 * The k6 initializer pod's script; `"$@"` is the user's k6 arguments followed by the script path.
 * Like k6-operator's initializer: `k6 archive` with the user's arguments (so --vus, --duration, -e
 * count) into `$LOADPLANE_ARCHIVE`, exiting with k6's code if that fails (k6's error is already on
 * stderr); then the LOADPLANE_REQUIREMENTS marker line on stdout and `k6 inspect
 * --execution-requirements` of the archive, whose JSON follows the marker.
 */
export const K6_INITIALIZER_SCRIPT = `set -u
archive=\${${ENV_ARCHIVE}:-}
[ -n "$archive" ] || { echo '${INITIALIZER_SCRIPT_NAME}: ${ENV_ARCHIVE} is not set' >&2; exit 64; }
k6 archive --archive-out "$archive" "$@" || exit $?
echo '${REQUIREMENTS_MARKER}'
exec k6 inspect --execution-requirements "$archive"
`;

/** A pod's command for a script: `['sh', '-c', script, name]`; the pod's args become `"$@"`. */
export function shellCommand(script: string, name: string): string[] {
  return [POD_SHELL, '-c', script, name];
}
