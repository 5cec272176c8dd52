import type { ParsedSampleSizeInput } from './input.js';
import { invalid } from './input.js';
import { zQuantile } from './quantiles.js';
import { allocationRatio, groups, roundUp, type SampleSizeResult } from './result.js';

/** Events from Schoenfeld (1983) or Freedman (1982); patients = events / eventProbability, split by the ratio. */
export function timeToEvent(input: ParsedSampleSizeInput): SampleSizeResult {
  if (input.hypothesis !== 'superiority') throw invalid('hypothesis', `time_to_event supports superiority only; ${input.hypothesis} is not supported yet`);
  const hr = input.hazardRatio!;
  if (hr === 1) throw invalid('hazardRatio', 'a hazard ratio of 1 means no difference to detect');
  const k = input.ratio;
  const z2 = (zQuantile(1 - input.alpha / input.sides) + zQuantile(input.power)) ** 2;
  // Freedman's phi is n1 / n2 with the hazard ratio group 1 versus group 2 (Freedman 1982; Machin et al. 2009, 8.4),
  // so it is the inverse of our ratio n2 / n1. Schoenfeld's (1 + k)^2 / k is the same for k and 1 / k.
  const phi = 1 / k;
  const events = roundUp(input.method === 'freedman' ? (z2 * (1 + phi * hr) ** 2) / (phi * (1 - hr) ** 2) : (z2 * (1 + k) ** 2) / (k * Math.log(hr) ** 2));
  const patients = events / input.eventProbability!;
  const g = groups(patients / (1 + k), k, input.dropout);
  return {
    perGroup: g.perGroup,
    total: g.total,
    events,
    method: `time to event, superiority, ${input.method === 'freedman' ? 'Freedman (1982) events, phi = n1 / n2' : 'Schoenfeld (1983) events'}, log-rank test`,
    assumptions: [
      `hazard ratio ${hr} (group 1 versus group 2), alpha ${input.alpha} (${input.sides}-sided), power ${input.power}, ${allocationRatio(k)}`,
      `patients = ${events} events / event probability ${input.eventProbability}`,
      g.note,
    ],
  };
}
