export { filterHits, mayShow } from './audience.js';
export { MessageGrants, withoutGrant } from './grants.js';
export { SearchLimiter } from './limiter.js';
export { keptText, resultsText } from './search-text.js';
export { createSearchTool, feishuSearchConnection, type SearchToolOptions } from './search-tool.js';
