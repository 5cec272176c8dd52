export { assessRisk } from './assess-risk.js';
export { assessRiskTool } from './tool.js';
export { LEVEL_GUIDANCE, leadWithGuidance } from './level-guidance.js';
