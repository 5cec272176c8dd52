import { parseSampleSizeInput, type SampleSizeInput } from './input.js';
import { oneProportion, twoProportions } from './proportions.js';
import type { SampleSizeResult } from './result.js';
import { timeToEvent } from './time-to-event.js';
import { twoMeans } from './two-means.js';

/** Sample size for a two-arm or single-arm trial; invalid input is a VALIDATION_FAILED naming the field. */
export function calculateSampleSize(input: SampleSizeInput): SampleSizeResult {
  const parsed = parseSampleSizeInput(input);
  switch (parsed.design) {
    case 'two_means':
      return twoMeans(parsed);
    case 'two_proportions':
      return twoProportions(parsed);
    case 'one_proportion':
      return oneProportion(parsed);
    case 'time_to_event':
      return timeToEvent(parsed);
  }
}
