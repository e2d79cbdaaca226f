/** Where Gatling's pods have loadplane's mounts (engines/gatling/manifests.ts builds them; spec validation keeps the user's volumeMounts off them). */

/**
 * The bundle's home in the reference image. Its launcher keeps the compiler's cache in
 * `$GATLING_HOME/target` (gatling-bundle CommandHelper.TargetDirectory), which the read-only root
 * filesystem refuses: that directory is an emptyDir. An image with Gatling elsewhere needs its own
 * `target` writable.
 */
export const GATLING_HOME = '/opt/gatling';

/** Where the simulation is mounted alone (podTemplate's scriptAloneAt). */
export const GATLING_SIMULATION_MOUNT = '/loadplane/simulation';
/** The compiler cache's emptyDir (see GATLING_HOME). */
export const GATLING_WRITABLE_PATHS: readonly string[] = [`${GATLING_HOME}/target`];
/** Where Gatling's pods have loadplane's mounts besides the common ones (EngineRules.podMountPaths). */
export const GATLING_POD_MOUNT_PATHS: readonly string[] = [GATLING_SIMULATION_MOUNT, ...GATLING_WRITABLE_PATHS];
