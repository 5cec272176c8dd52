// The audit trail lives in core (users, tokens and documents are audited too); trial code imports it here.
export { appendAudit, appendAuditEntries, listAudit } from '../../core/audit/audit-log.js';
