import { describe, expect, it } from 'vitest';
import { isProtocolComplete, stageSteps } from './stage-steps';

const stages = [
  { stageId: 'scientific_question', stageName: 'Scientific question', contextField: 'scientificQuestion' },
  { stageId: 'pico', stageName: 'PICO', contextField: 'pico' },
  { stageId: 'study_design', stageName: 'Study design', contextField: 'studyDesign' },
];

describe('stageSteps', () => {
  it('ticks completed stages, highlights the current one and leaves the rest to come', () => {
    const steps = stageSteps({ stages, completedStages: ['scientific_question'], currentStage: 'pico' });
    expect(steps.map((step) => [step.stageId, step.state, step.position])).toEqual([
      ['scientific_question', 'completed', 1],
      ['pico', 'current', 2],
      ['study_design', 'upcoming', 3],
    ]);
  });

  it('keeps the last stage ticked once it is completed', () => {
    const steps = stageSteps({ stages, completedStages: ['scientific_question', 'pico', 'study_design'], currentStage: 'study_design' });
    expect(steps.map((step) => step.state)).toEqual(['completed', 'completed', 'completed']);
  });
});

describe('isProtocolComplete', () => {
  it('is true only when every stage is completed', () => {
    expect(isProtocolComplete({ stages, completedStages: ['scientific_question', 'pico'] })).toBe(false);
    expect(isProtocolComplete({ stages, completedStages: ['pico', 'study_design', 'scientific_question'] })).toBe(true);
    expect(isProtocolComplete({ stages: [], completedStages: [] })).toBe(false);
  });
});
