import { parseArgs } from 'node:util';
import { ClinAgentError, errorMessage } from '../core/errors.js';
import { loadEnvFile } from './env-file.js';

const USAGE = `Usage: clinagent <command> [arguments]

Commands:
  serve                         start the HTTP server, the web console and job workers
  worker                        run job workers only (needs DATABASE_URL; run several to scale out)
  migrate                       apply database migrations and exit
  db copy --to <postgres url>   copy everything from the embedded database (or --from <data dir>) into an empty
                                PostgreSQL database, then check counts and the audit chain there [--dry-run]
  run <scenarioId> "<input>"    run a scenario once and print the AgentResult as JSON; a Dify app's start form
                                with --input name=value (repeat it) or --inputs '{"visit": 2}'
  ingest <scenarioId> <file>    ingest a .txt, .md or .pdf file into a scenario's documents
  login-link                    print a new one-time admin sign-in link
  token list <user>             list a user's tokens (by name or id): state, last use, expiry
  token revoke <tokenId>        revoke a token at once (audited as cli:<your OS user>)
  audit verify [projectId]      check the audit trail's keyed hash chain (every project when no id); exit 1 if broken
                                [--export FILE] write the chains' heads to keep elsewhere; [--anchor FILE] check against one
  import <projectId>            import a REDCap export (--dictionary F --records F [--events F] [--arms F])
                                or a CDISC ODM file (--odm F) through a running server; exit 1 listing every problem
  qc <projectId> <skillId>      run a QC batch on a running server and show its progress [--records S001,S002]
                                import and qc need CLINAGENT_TOKEN; they find the server by --url, CLINAGENT_URL,
                                or the HOST and PORT the server reads

Configuration comes from environment variables, and from .env in the working folder (or the file
CLINAGENT_ENV_FILE names) for any not set: every command reads the same settings as serve. See .env.example.`;

type Command = (args: string[]) => Promise<number>;

// Loaded on demand: importing every command would load the server, pg-boss and PGlite just to print help.
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.js')).serveCommand,
  worker: async () => (await import('./worker.js')).workerCommand,
  migrate: async () => (await import('./migrate.js')).migrateCommand,
  db: async () => (await import('./db-copy.js')).dbCommand,
  run: async () => (await import('./run.js')).runCommand,
  ingest: async () => (await import('./ingest.js')).ingestCommand,
  'login-link': async () => (await import('./login-link.js')).loginLinkCommand,
  token: async () => (await import('./token.js')).tokenCommand,
  audit: async () => (await import('./audit.js')).auditCommand,
  import: async () => (await import('./import.js')).importCommand,
  qc: async () => (await import('./qc.js')).qcCommand,
};

export async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({ args: argv, allowPositionals: true, strict: false, options: { help: { type: 'boolean', short: 'h' } } });
  const [command] = positionals;
  // The command gets its raw arguments: parsed here, options such as `qc --records S1,S2` would be lost.
  const rest = command ? argv.slice(argv.indexOf(command) + 1) : [];
  if (!command || values.help) {
    process.stdout.write(USAGE + '\n');
    return command || values.help ? 0 : 1;
  }
  const load = COMMANDS[command];
  if (!load) {
    process.stderr.write(`Unknown command "${command}".\n\n${USAGE}\n`);
    return 1;
  }
  try {
    // Before any command reads its configuration: every command sees the settings `serve` sees.
    loadEnvFile();
    return await (await load())(rest);
  } catch (error) {
    process.stderr.write(`clinagent ${command}: ${ClinAgentError.isInstance(error) ? `${error.code}: ${error.message}` : errorMessage(error)}\n`);
    return 1;
  }
}
