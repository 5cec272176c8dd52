import { isDatabaseUnavailable } from '../core/db/database-unavailable.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';

/**
 * Keeps `serve` and `worker` running while PostgreSQL restarts. pg-boss 10's worker loop settles a fetched job with
 * complete() or fail() without awaiting it (manager.js, onFetch), so when the database is down at that moment the
 * rejection is unhandled and Node ends the process: the chaos test saw the server and both workers die when
 * PostgreSQL restarted mid-batch. Such a job is left active and its run is recovered by the orphan sweep once the
 * database is back, so a rejection that only says the database is unavailable is logged and the process goes on;
 * any other unhandled rejection still ends it, as before.
 */
export function surviveDatabaseRestarts(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    if (isDatabaseUnavailable(reason)) {
      logger.warn({ err: errorMessage(reason) }, 'a database statement failed while the database was unavailable; its work is picked up again once it is back');
      return;
    }
    logger.fatal({ err: reason }, 'unhandled rejection; stopping');
    process.exit(1);
  });
}
