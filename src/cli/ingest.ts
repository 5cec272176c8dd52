import { readFile } from 'node:fs/promises';
import cliProgress from 'cli-progress';
import path from 'node:path';
import { closeContext, createContext } from '../context.js';
import { loadConfig } from '../core/config.js';
import { ClinAgentError } from '../core/errors.js';
import { extractText } from '../rag/index.js';

export async function ingestCommand(args: string[]): Promise<number> {
  const [scenarioId, file, documentId] = args;
  if (!scenarioId || !file) {
    throw new ClinAgentError('VALIDATION_FAILED', 'Usage: clinagent ingest <scenarioId> <file> [documentId], e.g. clinagent ingest protocol-qa ./protocol.pdf');
  }
  const ctx = await createContext(loadConfig());
  try {
    const scenario = ctx.scenarios.get(scenarioId);
    if (!scenario.rag.enabled) throw new ClinAgentError('VALIDATION_FAILED', `Scenario "${scenarioId}" does not use RAG (rag.enabled is false in ${scenario.sourceFile}).`);
    const bytes = await readFile(file).catch((error: NodeJS.ErrnoException) => {
      throw new ClinAgentError('NOT_FOUND', `Cannot read ${file}: ${error.code === 'ENOENT' ? 'no such file' : error.message}.`);
    });
    const sourceFile = path.basename(file);
    const text = await extractText(sourceFile, new Uint8Array(bytes));
    const result = await ctx.rag.ingestDocument({ documentId, scenarioId, sourceFile, text, collection: scenario.rag.collection });
    process.stdout.write(`${result.unchanged ? 'Unchanged' : 'Ingested'} ${sourceFile} as ${result.documentId}: ${chunks(result.chunks)}.\n`);
    const scope = { scenarioId, collection: scenario.rag.collection };
    const before = await ctx.rag.indexStatus(scope);
    if (before.index === 'in-process' && before.chunks >= before.indexFromChunks) {
      // A graph built here would end with this command: the server builds its own from the table when it starts.
      process.stdout.write(`Search index: built in the server's memory when it starts (${chunks(before.chunks)}); searches are exact until then.\n`);
      return 0;
    }
    // What the background ingest job would do, here in the foreground: the command ends with the index current.
    const display = createIndexingDisplay();
    const status = await ctx.rag.indexScope({ scenarioId, collection: scenario.rag.collection }, { onProgress: display.update }).finally(display.stop);
    process.stdout.write(
      status.state === 'none'
        ? `Search index: none needed (${chunks(status.chunks)}; a scenario gets one from ${status.indexFromChunks}); searches are exact.\n`
        : `Search index: ${status.state}, ${status.indexedChunks} of ${chunks(status.chunks)} (${status.percent}%).\n`,
    );
    return 0;
  } finally {
    await closeContext(ctx);
  }
}

/** A bar on a terminal; one plain line per step elsewhere (CI logs, tests), where a bar's redraws are noise. */
function createIndexingDisplay(): { update(progress: { added: number; toAdd: number; percent: number }): void; stop(): void } {
  if (process.stdout.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: 'Indexing {bar} {value}/{total} chunks added to the search index | {duration_formatted}', stream: process.stdout, hideCursor: true },
      cliProgress.Presets.shades_classic,
    );
    let started = false;
    return {
      update({ added, toAdd }) {
        if (!started) bar.start(toAdd, added);
        started = true;
        bar.setTotal(toAdd);
        bar.update(added);
      },
      stop: () => started && bar.stop(),
    };
  }
  return {
    update: ({ added, toAdd, percent }) => void process.stdout.write(`Indexing: ${added} of ${toAdd} chunks added to the search index (${percent}%).\n`),
    stop() {},
  };
}

const chunks = (n: number): string => `${n} chunk${n === 1 ? '' : 's'}`;
