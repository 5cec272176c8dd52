import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/paths.js';
import { parseArmsCsv } from './parse-arms.js';
import { parseEventsCsv, parseEventsText } from './parse-events.js';

const readTrialTestFile = (name: string) => readFileSync(path.join(packageRoot(), 'test-data', 'trial', name), 'utf8');

describe('parseEventsCsv', () => {
  it('reads our layout', () => {
    const csv = 'event_name,label,day_offset,window_before,window_after\nv1,V1 Baseline,0,0,0\nv2,V2 Week 4,28,3,3\n';
    expect(parseEventsCsv(csv)).toEqual([
      { eventName: 'v1', label: 'V1 Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 },
      { eventName: 'v2', label: 'V2 Week 4', dayOffset: 28, windowBefore: 3, windowAfter: 3, armNum: 1 },
    ]);
  });

  it("reads REDCap's Define My Events export, using event_name as the label and ignoring piped custom labels", () => {
    expect(parseEventsCsv(readTrialTestFile('redcap-events.csv'))).toEqual([
      { eventName: 'v1_arm_1', label: 'V1 基线 Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 },
      { eventName: 'v2_arm_1', label: 'V2 第4周 Week 4', dayOffset: 28, windowBefore: 3, windowAfter: 3, armNum: 1 },
    ]);
  });

  it("reads REDCap 14's event export without day offsets: every event on day 0 with no window, in its arm", () => {
    expect(parseEventsCsv(readTrialTestFile('redcap14-events.csv'))).toEqual([
      { eventName: 'screening_arm_1', label: 'Screening', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 },
      { eventName: 'v1_arm_1', label: 'V1 Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 },
      { eventName: 'v2_arm_1', label: 'V2 Week 4', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 1 },
      { eventName: 'v1_arm_2', label: 'V1 Baseline', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 2 },
      { eventName: 'v2_arm_2', label: 'V2 Week 4', dayOffset: 0, windowBefore: 0, windowAfter: 0, armNum: 2 },
    ]);
  });

  it("reads REDCap 14's scheduled event export: offset_min and offset_max are the days allowed before and after", () => {
    const events = parseEventsCsv(readTrialTestFile('redcap14-events-scheduled.csv'), 'events.csv', { arms: parseArmsCsv(readTrialTestFile('redcap14-arms.csv')) });
    expect(events.map((event) => [event.eventName, event.armNum, event.dayOffset, event.windowBefore, event.windowAfter])).toEqual([
      ['v1_arm_1', 1, 0, 0, 0],
      ['v2_arm_1', 1, 28, 3, 3],
      ['v1_arm_2', 2, 0, 0, 0],
      ['v2_arm_2', 2, 28, 3, 3],
    ]);
  });

  it('refuses an event in an arm the arms file does not define, and a bad arm number, naming line and column', () => {
    const arms = parseArmsCsv('arm_num,name\n1,Drug\n');
    const { problems } = parseEventsText(readTrialTestFile('redcap14-events.csv'), 'events.csv', { arms, armsSource: 'arms.csv' });
    expect(problems.map((problem) => `${problem.line} ${problem.field}: ${problem.problem}`)).toEqual([
      '5 arm_num: the event is in arm 2, but arms.csv defines only arm 1; export the arms and events of the same project, or fix arm_num',
      '6 arm_num: the event is in arm 2, but arms.csv defines only arm 1; export the arms and events of the same project, or fix arm_num',
    ]);
    const bad = parseEventsText('unique_event_name,event_name,arm_num\nv1_arm_1,V1,one\nv2_arm_1,V2,\n');
    expect(bad.problems.map((problem) => `${problem.line} ${problem.field}: ${problem.problem}`)).toEqual([
      '2 arm_num: "one" is not an arm number (1, 2, ...)',
      '3 arm_num: the arm number is empty; REDCap numbers arms from 1',
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
