import { parseArgs } from 'node:util';
import { ClinAgentError, errorMessage } from '../core/errors.js';
import { ingestCommand } from './ingest.js';
import { loginLinkCommand } from './login-link.js';
import { migrateCommand } from './migrate.js';
import { runCommand } from './run.js';
import { serveCommand } from './serve.js';
import { workerCommand } from './worker.js';

const USAGE = `Usage: clinagent <command> [arguments]

Commands:
  serve                         start the HTTP server, the web console and job workers
  worker                        run job workers only (needs DATABASE_URL; run several to scale out)
  migrate                       apply database migrations and exit
  run <scenarioId> "<input>"    run a scenario once and print the AgentResult as JSON
  ingest <scenarioId> <file>    ingest a .txt, .md or .pdf file into a scenario's documents
  login-link                    print a new one-time admin sign-in link

Configuration comes from environment variables; see .env.example.`;

const COMMANDS: Record<string, (args: string[]) => Promise<number>> = {
  serve: serveCommand,
  worker: workerCommand,
  migrate: migrateCommand,
  run: runCommand,
  ingest: ingestCommand,
  'login-link': loginLinkCommand,
};

export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, strict: false, options: { help: { type: 'boolean', short: 'h' } } });
  const [command, ...rest] = positionals;
  if (!command || values.help) {
    process.stdout.write(USAGE + '\n');
    return command || values.help ? 0 : 1;
  }
  const handler = COMMANDS[command];
  if (!handler) {
    process.stderr.write(`Unknown command "${command}".\n\n${USAGE}\n`);
    return 1;
  }
  try {
    return await handler(rest);
  } catch (error) {
    process.stderr.write(`clinagent ${command}: ${ClinAgentError.isInstance(error) ? `${error.code}: ${error.message}` : errorMessage(error)}\n`);
    return 1;
  }
}
