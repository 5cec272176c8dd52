import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/paths.js';
import { parseEventsCsv, parseEventsText } from './parse-events.js';

const readTrialTestFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', name), 'utf8');

describe('parseEventsCsv', () => {
  it('reads our layout', () => {
    const csv = 'event_name,label,day_offset,window_before,window_after\nv1,V1 Baseline,0,0,0\nv2,V2 Week 4,28,3,3\n';
    expect(parseEventsCsv(csv)).toEqual([
      { eventName: 'v1', label: 'V1 Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 },
      { eventName: 'v2', label: 'V2 Week 4', dayOffset: 28, windowBefore: 3, windowAfter: 3 },
    ]);
  });

  it("reads REDCap's Define My Events export, using event_name as the label and ignoring piped custom labels", () => {
    expect(parseEventsCsv(readTrialTestFile('redcap-events.csv'))).toEqual([
      { eventName: 'v1_arm_1', label: 'V1 基线 Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0 },
      { eventName: 'v2_arm_1', label: 'V2 第4周 Week 4', dayOffset: 28, windowBefore: 3, windowAfter: 3 },
    ]);
  });

  it('reports bad offsets, negative windows, blank and duplicate names with their lines', () => {
    const csv = 'event_name,label,day_offset,window_before,window_after\nv1,V1,0,0,0\nv2,V2,28.5,3,3\nv3,V3,56,-5,5\n,V4,84,7,7\nv1,Again,0,0,0\nv5,V5,,0,0\n';
    const { problems } = parseEventsText(csv);
    expect(problems.map((problem) => `${problem.line} ${problem.field}: ${problem.problem}`)).toEqual([
      '3 day_offset: "28.5" is not a whole number of days',
      '4 window_before: "-5" is negative; a window is the number of days allowed before or after the target day',
      '5 event_name: the event name is empty',
      '6 event_name: "v1" is already defined on line 2; event names must be unique',
      '7 day_offset: the day offset is empty; give the target day relative to enrolment (day 0)',
    ]);
  });
});
