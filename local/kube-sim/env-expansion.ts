/**
 * The kubelet's `$(VAR)` expansion (Kubernetes' third_party/forked/golang/expansion, applied by
 * kubecontainer.ExpandContainerCommandAndArgs to a container's command and args with its whole
 * environment, and by makeEnvironmentVariables to each `env[].value` with the variables defined before
 * it): `$(NAME)` becomes NAME's value, or stays `$(NAME)` when NAME is not defined; `$$` is one `$`;
 * a `$` before anything else, an unclosed `$(` and a `$` at the very end stay as written. Values read
 * through `valueFrom` and `envFrom` are not expanded. Read from the Kubernetes source; the escape rule
 * is what a manifest writer needs to pass a `$(` through literally (`$$(`).
 */

/** `input` with its `$(NAME)` references replaced by `lookup(NAME)`, where that is defined. */
export function expandVariables(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let advance = 1;
    if (next === '$') out += '$';
    else if (next === '(') {
      const close = input.indexOf(')', cursor + 2);
      if (close === -1) out += '$(';
      else {
        const name = input.slice(cursor + 2, close);
        out += lookup(name) ?? `$(${name})`;
        advance = close - cursor;
      }
    } else out += `$${next}`;
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}
