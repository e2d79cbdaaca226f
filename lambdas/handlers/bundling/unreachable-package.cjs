/**
 * Stands in, in the Lambda bundles only, for the packages cdk/function-bundling.ts lists in
 * UNREACHABLE_PACKAGES: @kubernetes/client-node (and node-fetch) import them at load for features
 * loadplane never uses (proxies, auth plugins, websockets, kubectl cp, YAML kubeconfigs, a URL polyfill).
 * Loading this does nothing; any use of what it exports throws, naming the stub, so a path thought
 * unreachable that is taken fails loudly instead of misbehaving. test/cdk/unreachable-packages.test.ts
 * runs the clusters' path from the bundle with this stub in place.
 */
/* global module */
'use strict';

function unreachable(_target, key) {
  // Read by esbuild's CommonJS interop when the stub is imported: not a use.
  if (key === '__esModule') return false;
  throw new Error(`loadplane Lambda bundle: ${String(key)} of a package left out of the bundle was used (cdk/function-bundling.ts: UNREACHABLE_PACKAGES)`);
}

// esbuild's interop copies a CommonJS module onto an object whose prototype is the module's: named
// imports read through it, so the prototype throws as well.
const throwingPrototype = new Proxy({}, { get: unreachable });
module.exports = new Proxy({}, { get: unreachable, getPrototypeOf: () => throwingPrototype });
