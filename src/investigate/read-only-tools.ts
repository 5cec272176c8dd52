/**
 * Seed 000 section 5.2's whitelist, plus list_open_queries: the only tools a question may use. They read trial
 * data, the protocol and statistics; nothing here changes anything, so a question can never cause a write,
 * whatever the model is talked into asking for.
 */
export const READ_ONLY_TOOLS = ['read_clinical_data', 'search_protocol', 'get_project_stats', 'check_visit_window', 'list_open_queries'] as const;
