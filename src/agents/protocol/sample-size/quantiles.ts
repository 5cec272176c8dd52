import jstat from 'jstat';

const { jStat } = jstat;

/** Standard normal quantile: z(0.975) = 1.959964. */
export const zQuantile = (p: number): number => jStat.normal.inv(p, 0, 1);

export const tQuantile = (p: number, df: number): number => jStat.studentt.inv(p, df);

export const noncentralTCdf = (x: number, df: number, ncp: number): number => jStat.noncentralt.cdf(x, df, ncp);
