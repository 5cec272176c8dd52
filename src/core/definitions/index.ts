export { createDefinitionCatalog, type Definition, type DefinitionCatalog, type DefinitionKind } from './definition-catalog.js';
export { loadDefinitionFile, loadDefinitionFiles, loadDefinitions, readDefinitionFolder, type DefinitionFailure, type DefinitionSpec } from './load-definitions.js';
