export { SPIRIT_2025_ITEMS, SPIRIT_2025_ITEM_COUNT } from './spirit-2025.js';
export { SPIRIT_CONTEXT_MAP, spiritCoverage, type SpiritCoverage } from './coverage.js';
