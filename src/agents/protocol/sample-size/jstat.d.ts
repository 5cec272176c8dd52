// jstat ships no types and there is no @types/jstat: only the distributions the calculator uses are declared.
declare module 'jstat' {
  interface Distribution {
    cdf(x: number, ...params: number[]): number;
    inv(p: number, ...params: number[]): number;
  }
  const jstat: {
    jStat: {
      normal: Distribution;
      studentt: Distribution;
      noncentralt: { cdf(x: number, dof: number, ncp: number): number };
    };
  };
  export default jstat;
}
