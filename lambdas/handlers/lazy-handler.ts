/**
 * A Lambda handler whose deps are built on its first invocation: importing a handler module reads
 * no environment and creates no client (tests import the modules and build handlers with their own
 * deps through each module's makeHandler). A build that throws is tried again on the next invocation.
 */
export function lazyHandler<E, C, R>(build: () => (event: E, context: C) => Promise<R>): (event: E, context: C) => Promise<R> {
  let built: ((event: E, context: C) => Promise<R>) | undefined;
  return (event, context) => {
    built ??= build();
    return built(event, context);
  };
}
