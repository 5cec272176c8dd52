/** `npm run bench`: every benchmark, one after the other, each printing its own table. */
const { main: rag } = await import('./rag.bench.js');
const { main: agent } = await import('./agent.bench.js');
const { main: loop } = await import('./loop.bench.js');
const { main: rules } = await import('./rules.bench.js');
const { main: qc } = await import('./qc.bench.js');
const { main: stream } = await import('./stream.bench.js');
const { main: assistant } = await import('./assistant.bench.js');
const { main: importing } = await import('./import.bench.js');
const { main: reviewQueue } = await import('./review-queue.bench.js');
const { main: reviewPage } = await import('./review-page.bench.js');
const { main: crashRestart } = await import('./crash-restart.bench.js');

console.log(`ClinAgent benchmarks on Node ${process.version}, ${(await import('node:os')).cpus().length} cores`);
await rag();
await agent();
await loop();
await rules();
await qc();
await stream();
await assistant();
await importing();
await reviewQueue();
await reviewPage();
// The crash tests SIGKILL servers and restart PostgreSQL, so they are not run from here; they print their own figures.
console.log('Crash tests of every process (kills, resumes after a restart, PostgreSQL restart recovery): npm run test:chaos (TEST_DATABASE_URL for the PostgreSQL half)');
await crashRestart();
