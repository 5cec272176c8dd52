// Prints one summary line for a vitest JSON report, then each failed test (or file that failed to load) with the
// first lines of its error: the CI log is often read from its tail, where the reporter's own failure list has
// scrolled out of sight.
const path = require('node:path');

const [reportPath, label] = process.argv.slice(2);
const report = require(path.resolve(reportPath));
const skipped = report.numPendingTests + report.numTodoTests;
console.log(`${label}: ${report.numPassedTests} passed, ${report.numFailedTests} failed, ${skipped} skipped`);

const firstLines = (text) => String(text).split('\n').filter((line) => line.trim() !== '').slice(0, 3).map((line) => `      ${line.trim().slice(0, 300)}`).join('\n');
for (const file of report.testResults) {
  const relative = path.relative(process.cwd(), file.name);
  const failedTests = file.assertionResults.filter((test) => test.status === 'failed');
  for (const test of failedTests) console.log(`  failed: ${relative} > ${test.fullName}\n${firstLines(test.failureMessages.join('\n'))}`);
  // A test with `retry` that passed keeps the errors of its failed attempts: shown, so a flaky test stays visible.
  for (const test of file.assertionResults.filter((t) => t.status === 'passed' && t.failureMessages?.length)) {
    console.log(`  passed on a retry: ${relative} > ${test.fullName}\n${firstLines(test.failureMessages[0])}`);
  }
  if (file.status === 'failed' && failedTests.length === 0) console.log(`  failed: ${relative} (the file itself)\n${firstLines(file.message)}`);
}
