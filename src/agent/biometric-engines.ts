/**
 * The biometric engines the agent runs on: image → template extraction and the fingerprint
 * matcher for the 1:N index (the iris matcher is built into the identifier).
 */
import type { AgentConfig } from './config.js';
import type { ModalityMatcher } from './identifier.js';
import type { Extractor } from './terminal-runtime.js';

export async function createExtractor(_config: AgentConfig): Promise<Extractor | null> {
  return null;
}

export async function createFingerMatcher(_config: AgentConfig): Promise<ModalityMatcher | null> {
  return null;
}
