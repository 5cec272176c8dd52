import { createRequire } from 'node:module';

/**
 * jstat ships no types and there is no @types/jstat, so it is loaded through require with the few distributions
 * the calculator uses typed here (an ambient `declare module` was not picked up reliably by a fresh type check).
 */
interface Distribution {
  inv(p: number, ...params: number[]): number;
}
interface JStat {
  normal: Distribution;
  studentt: Distribution;
  noncentralt: { cdf(x: number, dof: number, ncp: number): number };
}
const { jStat } = createRequire(import.meta.url)('jstat') as { jStat: JStat };

/** Standard normal quantile: z(0.975) = 1.959964. */
export const zQuantile = (p: number): number => jStat.normal.inv(p, 0, 1);

export const tQuantile = (p: number, df: number): number => jStat.studentt.inv(p, df);

export const noncentralTCdf = (x: number, df: number, ncp: number): number => jStat.noncentralt.cdf(x, df, ncp);
