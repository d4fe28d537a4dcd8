/**
 * `edge-agent users add|list|remove`: the employees of the attendance service, through its API
 * (operations 1-3) with this terminal's URL and key, so a technician can add a person and enrol
 * them without curl.
 *
 * Tested in test/integration/cli-management.test.ts (add, list and remove through the API with the
 * terminal's key).
 */
import type { Command } from 'commander';
import { action, defineCommand, missingFlag, printJson, usageError, withJson, withVerbs } from '../command.js';
import { withCommonOptions, type CommonValues } from '../common-options.js';
import { out } from '../output.js';
import type { AttendanceClient } from '../../api/client.js';
import type { Envelope, User } from '../../api/types.js';

type Values = CommonValues & {
  'first-name'?: string;
  'last-name'?: string;
  email?: string;
  disabled?: boolean;
  yes?: boolean;
  json?: boolean;
};

/** The API client of this terminal's configuration (or of --api with --api-key and --api-secret-file alone). */
async function serviceClient(
  values: Values,
  command: string,
): Promise<{
  client: AttendanceClient;
  config: import('../../config/standalone.js').StandaloneConfig;
  secrets: import('../../config/secrets.js').Secrets;
}> {
  const { lookedAt, standaloneConfig, standaloneSecrets } = await import('../../config/standalone.js');
  const { createAttendanceClient } = await import('../../daemon/upstreams.js');
  // On a terminal: its config. Elsewhere --api with the key on the command line (or --secrets) is enough.
  const config = standaloneConfig(values, process.env, {
    complete: Boolean(values.api && ((values['api-key'] && values['api-secret-file']) || values.secrets)),
  });
  const secrets = standaloneSecrets(config, values);
  if (!config.api.url) throw missingFlag(command, '--api URL', 'the attendance service', lookedAt(config));
  const where = config.secretsPath ? `neither the flags nor ${config.secretsPath} give it` : lookedAt(config);
  if (!secrets.apiKey) throw missingFlag(command, '--api-key KEY', 'an API key of the attendance service', where);
  if (!secrets.apiSecret) throw missingFlag(command, '--api-secret-file FILE', "the file holding that key's secret", where);
  return { client: createAttendanceClient(config, secrets), config, secrets };
}

/** What the service answered, as an error a person can act on, unless it is SUCCESS. */
async function refused(env: Envelope<unknown>, what: string, code: string): Promise<never> {
  const { AgentError } = await import('../../core/errors.js');
  const hints: Record<string, string> = {
    USER_NOT_AVAILABLE: `the service has no employee ${code}: "edge-agent users add ${code} --first-name F --last-name L" adds one`,
    INVALID_EMAIL: 'give a valid e-mail address with --email, or leave it out',
    FIRST_NAME_EMPTY: 'give --first-name',
    Last_NAME_EMPTY: 'give --last-name',
    INVALID_EMPCODE: 'that employee code is taken: choose another',
    ERROR: 'the service failed: its logs say why (journalctl, or the output of edge-agent serve)',
  };
  throw new AgentError(
    'CLI_SERVICE_REFUSED',
    `${what}: the attendance service answered ${env.statusCode}${env.statusDescription ? ` (${env.statusDescription})` : ''}`,
    { statusCode: env.statusCode, employeeCode: code },
    { hint: hints[env.statusCode] ?? 'see the service logs' },
  );
}

function describeUser(u: User): string {
  const status = String(u.status ?? '0') === '1' ? 'disabled' : 'active';
  return `${u.employeeCode}  ${`${u.firstName} ${u.lastName}`.trim()}${u.email ? `  <${u.email}>` : ''}  ${status}`;
}

export default function register(program: Command): Command {
  const users = defineCommand(program, {
    name: 'users',
    summary: "employees of the attendance service: add, list, remove (with this terminal's API key)",
    audience: 'technician',
    details: `Talks to the attendance service of this terminal's configuration (api.url, the API key and
secret of its secrets file), or to --api URL with --api-key and --api-secret-file.`,
  });
  withVerbs(users);

  const add = defineCommand(users, { name: 'add <code>', summary: 'add an employee, or update the one with this code (operation 1)' })
    .requiredOption('--first-name <name>', 'first name')
    .requiredOption('--last-name <name>', 'last name')
    .option('--email <address>', 'e-mail address')
    .option('--disabled', 'add the employee disabled (status 1)');
  withCommonOptions(withJson(add, 'print the user the service stored'));
  action<Values>(add, async (values, args) => {
    const code = args[0]!.trim();
    if (!code) throw usageError('users add', 'name the employee code: edge-agent users add CODE --first-name F --last-name L');
    const { client } = await serviceClient(values, 'users add');
    const env = await client.addOrUpdateUser({
      employeeCode: code,
      firstName: values['first-name']!,
      lastName: values['last-name']!,
      ...(values.email ? { email: values.email } : {}),
      status: values.disabled ? '1' : '0',
    });
    if (env.statusCode !== 'SUCCESS' || !env.returnValue) return refused(env, `adding ${code}`, code);
    if (values.json) printJson(env.returnValue);
    else out(`added ${describeUser(env.returnValue)}\nnext: edge-agent enroll ${code}\n`);
    return 0;
  });

  const list = defineCommand(users, {
    name: 'list [codes...]',
    summary: 'show employees by code (operation 3); without codes, those enrolled on this terminal',
    details: `The attendance API gets one employee by code and has no operation that lists them all: without
codes this lists the employees who have templates on this terminal, each as the service knows it.
Exit code 1 when a code is unknown to the service.`,
  });
  withCommonOptions(withJson(list, 'print {"users": [user...], "unknown": [code...]}'));
  action<Values>(list, async (values, args) => {
    const { client, config, secrets } = await serviceClient(values, 'users list');
    let codes = args.map((c) => c.trim()).filter(Boolean);
    const enrolled = new Map<string, string[]>();
    if (codes.length === 0) {
      const { AgentError } = await import('../../core/errors.js');
      if (!secrets.templateKey)
        throw new AgentError(
          'AGENT_NO_TEMPLATE_KEY',
          'listing the employees enrolled here needs the template key of this terminal',
          {},
          { hint: "give codes (edge-agent users list E1001 E1002), or run it with this terminal's configuration" },
        );
      const { openAgentDatabase } = await import('../../store/agent-db.js');
      const { TemplateCache } = await import('../../store/template-cache.js');
      const db = await openAgentDatabase(config.dataDir);
      try {
        const cache = await TemplateCache.open(db, { key: secrets.templateKey });
        for (const t of await cache.listTemplateMeta())
          enrolled.set(t.employeeCode, [...new Set([...(enrolled.get(t.employeeCode) ?? []), t.modality])]);
      } finally {
        await db.close();
      }
      codes = [...enrolled.keys()];
    }
    const found: User[] = [];
    const unknown: string[] = [];
    for (const code of codes) {
      const env = await client.getUser(code);
      if (env.statusCode === 'USER_NOT_AVAILABLE') unknown.push(code);
      else if (env.statusCode !== 'SUCCESS' || !env.returnValue) return refused(env, `looking up ${code}`, code);
      else found.push(env.returnValue);
    }
    if (values.json) printJson({ users: found, unknown });
    else {
      if (args.length === 0 && codes.length === 0) out('nobody is enrolled on this terminal (give codes to look employees up)\n');
      for (const u of found)
        out(`${describeUser(u)}${enrolled.has(u.employeeCode) ? `  enrolled here: ${enrolled.get(u.employeeCode)!.join(', ')}` : ''}\n`);
      for (const c of unknown)
        out(
          `${c}  not known to the attendance service${enrolled.has(c) ? ' (but enrolled here: "edge-agent users add" it, or delete its templates)' : ''}\n`,
        );
    }
    return unknown.length ? 1 : 0;
  });

  const remove = defineCommand(users, {
    name: 'remove <code>',
    summary: 'delete an employee and their biometrics from the service (operation 2; asks first, or --yes)',
    details: `The service keeps the employee's attendance events. Templates already on terminals stay there
until the site's template sync deletes them (or the ops command delete-user).`,
  }).option('--yes', 'do not ask');
  withCommonOptions(withJson(remove, 'print the user the service deleted'));
  action<Values>(remove, async (values, args) => {
    const code = args[0]!.trim();
    const { client } = await serviceClient(values, 'users remove');
    const { confirmed } = await import('../confirm.js');
    const current = await client.getUser(code);
    if (current.statusCode !== 'SUCCESS' || !current.returnValue) return refused(current, `removing ${code}`, code);
    if (
      !(await confirmed(
        `Delete ${describeUser(current.returnValue)} and their biometrics from the attendance service?`,
        values.yes,
        'users remove',
      ))
    ) {
      out('nothing deleted\n');
      return 1;
    }
    const env = await client.deleteUser(code);
    if (env.statusCode !== 'SUCCESS') return refused(env, `removing ${code}`, code);
    if (values.json) printJson(env.returnValue);
    else out(`removed ${code} from the attendance service (their events are kept)\n`);
    return 0;
  });
  return users;
}
