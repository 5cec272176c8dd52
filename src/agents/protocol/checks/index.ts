/** Edit checks from the protocol: eligibility and visit windows compiled into a QC skill, with its own tests. */
export { compileProtocolChecks } from './compile-checks.js';
export { generateTestRecords } from './test-records.js';
export { verifyProtocolChecks } from './verify-checks.js';
