// Which refunds backend a process uses: PostgreSQL when AGENT_REFUNDS_DATABASE_URL is set (one
// ledger for every worker, on any host), else the SQLite file AGENT_REFUNDS_DB (the embedded
// default: shared only by processes on one host that see the same file).
import { readEnv } from '../../../../runtime/env-vars';
import { PostgresRefundService } from './postgres';
import type { RefundStore } from './rules';
import { RefundService } from './service';

/** Where the ledger lives: a PostgreSQL URL, or a SQLite file. */
export type RefundsTarget = { url: string } | { file: string };

export function refundsTargetFromEnv(env: NodeJS.ProcessEnv = process.env): RefundsTarget {
  const url = readEnv('AGENT_REFUNDS_DATABASE_URL', env);
  return url ? { url } : { file: readEnv('AGENT_REFUNDS_DB', env) };
}

export function openRefundStore(target: RefundsTarget): RefundStore {
  return 'url' in target ? PostgresRefundService.open(target.url) : RefundService.open(target.file);
}

/** Opens the refunds ledger on first use, so a worker that never refunds never creates it. */
export function lazyRefundService(target: RefundsTarget = refundsTargetFromEnv()): () => RefundStore {
  let service: RefundStore | undefined;
  return () => (service ??= openRefundStore(target));
}
