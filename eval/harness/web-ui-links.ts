// Whether the report links its runs to the Temporal Web UI. The eval's own dev server ends with the
// eval, so links to it would be dead by the time anyone reads the report: none are written, and the
// report says why. With --server (a server that outlives the eval) the links are written when its
// Web UI answers.
import { runUrl } from '../../runtime/temporal-env';
import type { TemporalEnv } from '../../runtime/temporal-env';

export interface WebUiLinks {
  /** The Web UI the links open; null when the report has none. */
  base: string | null;
  note: string;
}

/** How long the Web UI has to answer before the report goes without links. */
const PROBE_MS = 3000;

export async function webUiLinks(
  env: Pick<TemporalEnv, 'uiUrl'>,
  serverKept: boolean,
  answers: (url: string) => Promise<boolean> = webUiAnswers,
): Promise<WebUiLinks> {
  if (!serverKept)
    return {
      base: null,
      note: "no Web UI links: the runs were on the eval's own dev server, which ended with it; run with --server ADDRESS (e.g. npm run server) for links that keep working",
    };
  if (!env.uiUrl || !(await answers(env.uiUrl)))
    return {
      base: null,
      note: `no Web UI links: the server's Web UI (${env.uiUrl || 'TEMPORAL_UI_URL unset'}) did not answer; set TEMPORAL_UI_URL to its address`,
    };
  return { base: env.uiUrl, note: `each run links to the Web UI at ${env.uiUrl}` };
}

export function trialUrl(links: WebUiLinks, env: Pick<TemporalEnv, 'namespace'>, workflowId: string): string | null {
  return links.base === null ? null : runUrl({ namespace: env.namespace, uiUrl: links.base }, workflowId);
}

/** Any HTTP answer below 500 within PROBE_MS. */
async function webUiAnswers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(PROBE_MS), redirect: 'manual' });
    await res.body?.cancel();
    return res.status < 500;
  } catch {
    return false;
  }
}
