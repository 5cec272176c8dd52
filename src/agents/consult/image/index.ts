// The consult's image analysis: upload checks, the vision call, the analyze_skin_image tool.
export { ACCEPTED_IMAGE_TYPES, checkImage, decodeImageBase64, type ImageMimeType } from './check-image.js';
export { analyzeSkinImage, type Likelihood, type SkinImageAnalysis, type VisionModel } from './analyze-image.js';
export { createAnalyzeSkinImageTool, NO_VISION_MESSAGE, type AnalyzeSkinImageDeps } from './tool.js';
export { createVisionGateway } from './vision-gateway.js';
