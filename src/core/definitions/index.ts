export { createDefinitionCatalog, type DefinitionCatalog, type DefinitionKind } from './definition-catalog.js';
export { buildDefinition, loadDefinitionFile, loadDefinitionFiles, loadDefinitions, readDefinitionFolder, type BuiltDefinition, type DefinitionFailure, type DefinitionSpec } from './load-definitions.js';
export { addNextVersion } from './next-version.js';
