/** Any container kube-sim has no behaviour for: runs one simulated second and exits 0. */
import type { ContainerProgram, ProgramContext } from './program';

const RUN_TIME_MS = 1000;

export class IdleProgram implements ContainerProgram {
  constructor(private readonly ctx: ProgramContext) {}

  start(): void {
    this.ctx.log(`kube-sim: no simulated behaviour for image ${this.ctx.container.image ?? '?'}; exiting 0 after 1s`);
    this.ctx.after(RUN_TIME_MS, () => this.ctx.exit(0));
  }
}
