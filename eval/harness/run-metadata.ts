// What a report was measured with, so two reports can be compared knowingly: the model and the kind
// of endpoint (never its key or full URL), the commit of the build, versions of the system prompt
// and of the action contract (hashes of their text and schema: a changed prompt changes the hash),
// the suite, the seed, the date, the Temporal server and whether its Web UI links work.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import {
  DECISION_SUMMARY_MAX_CHARS,
  escalateActionSchema,
  finalActionSchema,
  MAX_ACTION_DEPTH,
  messageActionSchema,
  toolActionSchema,
} from '../../common/contract';
import { systemPromptOf } from '../../activities/decide/system-prompt';
import { OFFLINE_BASE_URL } from '../../activities/decide/llm-config';
import { DEFAULT_MODEL } from '../../runtime/env-vars';
import { BUILD_INFO_FILE } from '../../worker/build-id';
import type { BuildInfo } from '../../worker/build-id';
import type { WebUiLinks } from './web-ui-links';

/** scripted: the eval's own scripted server; openai: the OpenAI API; local / remote: another compatible server. */
export type ModelEndpointKind = 'scripted' | 'openai' | 'local' | 'remote';

/** What a report calls the eval's own scripted server: it plays a script, it is no model to score. */
export const SCRIPTED_MODEL_NAME = 'scripted model (offline-model/scripted-llm-server.ts)';

/** What a report calls the worker's offline model (OPENAI_BASE_URL=offline). */
export const OFFLINE_MODEL_NAME = 'scripted model (offline-model/offline-model.ts)';

export interface RunMetadata {
  suite: string;
  date: string;
  /** The live model's name; a scripted one is named as such (SCRIPTED_MODEL_NAME), never as a model it stands in for. */
  model: string;
  base_url_kind: ModelEndpointKind;
  /** The build's commit (dist/build-info.json); null when the build recorded none. */
  commit: string | null;
  version: string | null;
  /** sha256 (12 hex digits) of the system prompt(s) the suite's runs get. */
  prompt_version: string;
  /** sha256 (12 hex digits) of the action contract's JSON schema and limits. */
  contract_version: string;
  seed: number;
  server: { address: string; namespace: string; own: boolean };
  web_ui: WebUiLinks;
}

export interface MetadataInput {
  suite: string;
  /** The model settings the workers got (OPENAI_MODEL, OPENAI_BASE_URL); undefined: the scripted model. */
  liveEnv: NodeJS.ProcessEnv | undefined;
  /** The system prompts the suite's runs get. */
  prompts: readonly string[];
  seed: number;
  server: { address: string; namespace: string };
  /** The server is the eval's own (it ended with the eval). */
  ownServer: boolean;
  webUi: WebUiLinks;
  infoFile?: string;
}

export function runMetadata(input: MetadataInput, now = new Date()): RunMetadata {
  const build = readBuildInfo(input.infoFile ?? BUILD_INFO_FILE);
  const kind = input.liveEnv ? endpointKind(input.liveEnv.OPENAI_BASE_URL) : 'scripted';
  return {
    suite: input.suite,
    date: now.toISOString(),
    model: !input.liveEnv
      ? SCRIPTED_MODEL_NAME
      : kind === 'scripted'
        ? OFFLINE_MODEL_NAME
        : input.liveEnv.OPENAI_MODEL || DEFAULT_MODEL,
    base_url_kind: kind,
    commit: build?.commit ?? null,
    version: build?.version ?? null,
    prompt_version: shortHash(input.prompts.join('\n\n')),
    contract_version: contractVersion(),
    seed: input.seed,
    server: { address: input.server.address, namespace: input.server.namespace, own: input.ownServer },
    web_ui: input.webUi,
  };
}

/** A scripted model's calls cost nothing and have no price: its reports give no dollar figure. */
export function isScripted(m: Pick<RunMetadata, 'base_url_kind'>): boolean {
  return m.base_url_kind === 'scripted';
}

/** The kind of endpoint a base URL names, without the URL itself (it may carry credentials). */
export function endpointKind(baseUrl: string | undefined): ModelEndpointKind {
  if (!baseUrl) return 'openai';
  if (baseUrl === OFFLINE_BASE_URL) return 'scripted';
  let host: string;
  try {
    host = new URL(baseUrl).hostname;
  } catch {
    return 'remote';
  }
  if (host === 'api.openai.com') return 'openai';
  return /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|::1)$/.test(host) ? 'local' : 'remote';
}

/** The system prompt of the scenario suite (the wired domain, one-shot runs). */
export const SCENARIO_PROMPTS: readonly string[] = [systemPromptOf({})];

/** The system prompt of a retail conversation run (the τ² suite). */
export const RETAIL_CONVERSATION_PROMPTS: readonly string[] = [systemPromptOf({ conversation: {}, domain: 'retail' })];

export function contractVersion(): string {
  const schemas = [toolActionSchema, finalActionSchema, escalateActionSchema, messageActionSchema].map((s) =>
    z.toJSONSchema(s),
  );
  return shortHash(JSON.stringify({ schemas, DECISION_SUMMARY_MAX_CHARS, MAX_ACTION_DEPTH }));
}

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

function readBuildInfo(file: string): BuildInfo | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as BuildInfo;
  } catch {
    return undefined;
  }
}
