/**
 * `edge-agent template info|compare|extract`: biometric template files. Each verb is a file of
 * `../template/`, owned by the feature it serves.
 *
 * Tested in test/integration/template-cli.test.ts and test/integration/template-extract.test.ts
 * (the template verbs it registers).
 */
import type { Command } from 'commander';
import { defineCommand, registerFolder, withVerbs } from '../command.js';

export default async function register(program: Command): Promise<Command> {
  const template = defineCommand(program, {
    name: 'template',
    summary: 'biometric templates: info, compare, extract',
    audience: 'integrators',
  });
  withVerbs(template);
  await registerFolder(template, new URL('../template/', import.meta.url));
  return template;
}
