export { calculateSampleSize } from './calculate.js';
export { SampleSizeInputSchema, type SampleSizeInput } from './input.js';
export type { SampleSizeResult } from './result.js';
export { calculateSampleSizeTool } from './tool.js';
