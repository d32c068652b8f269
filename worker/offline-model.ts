// OPENAI_BASE_URL=offline: the demo's scripted model (offline-model/offline-model.ts), served by the
// worker itself on a loopback port, so a standalone worker runs with no model service and no key.
// It plays the refund scenario for the user a run names: profile, billing, policy, then a refund
// (when the run allows issue_refund and the facts say one is due) or an answer from what it read;
// in a conversation, the README's retail chat (offline-model/offline-chat-model.ts).
import { offlineModel } from '../offline-model/offline-chat-model';
import { ScriptedLlmServer } from '../offline-model/scripted-llm-server';
import type { Script } from '../offline-model/scripted-llm-server';
import { readEnv } from '../runtime/env-vars';
import { OFFLINE_BASE_URL } from '../activities/decide/llm-config';
import type { LlmConfig } from '../activities/decide/llm-config';
import { lookUpPrice, loadPrices } from '../runtime/prices';

/** The model name the scripted server answers as; free in the default price table. */
export const OFFLINE_MODEL = 'scripted-llm';

export interface OfflineModel {
  /** The worker's LLM settings, pointed at the scripted server. */
  llm: LlmConfig;
  close(): Promise<void>;
}

/** Starts the scripted model when `llm` asks for it (OPENAI_BASE_URL=offline); undefined otherwise. */
export async function startOfflineModelIfAsked(llm: LlmConfig): Promise<OfflineModel | undefined> {
  if (llm.baseURL !== OFFLINE_BASE_URL) return undefined;
  const server = await startScriptedModel(offlineModel);
  return {
    llm: {
      ...llm,
      apiKey: 'offline',
      baseURL: server.baseUrl,
      model: OFFLINE_MODEL,
      price: lookUpPrice(OFFLINE_MODEL, loadPrices()),
    },
    close: () => server.close(),
  };
}

/** The scripted model on AGENT_OFFLINE_MODEL_PORT (0 or unset: any free port); a taken port is one line. */
export async function startScriptedModel(
  defaultScript: Script,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ScriptedLlmServer> {
  const port = readEnv('AGENT_OFFLINE_MODEL_PORT', env);
  try {
    return await ScriptedLlmServer.start({ defaultScript, port });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new Error(
      `the offline model cannot listen on 127.0.0.1 port ${port} (${code}); set AGENT_OFFLINE_MODEL_PORT to a free port, 0 for any`,
      { cause: err },
    );
  }
}
