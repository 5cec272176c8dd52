import type { ToolDefinition } from '../../../core/tools/registry.js';
import { calculateSampleSize } from './calculate.js';
import { SampleSizeInputSchema, type SampleSizeInput } from './input.js';

/** A pure computation: the model gets numbers and the method to cite, never data from records. */
export function calculateSampleSizeTool(): ToolDefinition<SampleSizeInput> {
  return {
    name: 'calculate_sample_size',
    description:
      'Compute a trial sample size: two means (t-test), two proportions, one proportion or time to event (events and patients); superiority, non-inferiority or equivalence; allocation ratio and dropout.',
    schema: SampleSizeInputSchema as unknown as ToolDefinition<SampleSizeInput>['schema'],
    run: (args) => calculateSampleSize(args),
  };
}
