// The consult's image analysis: upload checks, the vision call, the analyze_skin_image tool.
export { checkImage, decodeImageBase64 } from './check-image.js';
export { createAnalyzeSkinImageTool } from './tool.js';
export { createVisionGateway } from './vision-gateway.js';
