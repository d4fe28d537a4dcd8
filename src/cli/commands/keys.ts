/**
 * `edge-agent keys create|list|revoke --db FILE|URL`: API keys of the attendance service, in its
 * database, SQLite or PostgreSQL (the service and its replicas may be running).
 *
 * Tested in test/integration/cli-management.test.ts (create, list, revoke) and
 * test/integration/api-cli.test.ts.
 */
import { Option, type Command } from 'commander';
import { action, defineCommand, printJson, withJson, withVerbs } from '../command.js';
import { ROLES, type Role } from '../../server/auth.js';
import type { ServiceStore } from '../../server/store/store.js';

type Values = { db: string; role?: Role; create?: boolean; yes?: boolean; json?: boolean };

const DB_OPTION = ['--db <file|url>', 'the attendance service\'s SQLite file or PostgreSQL URL (as for "edge-agent serve --db")'] as const;

/**
 * Opens the service database; an SQLite file that does not exist is refused (a typo must not make
 * a new, empty database that no service reads), unless `create`. A PostgreSQL database must exist
 * already (its tables are made on first use, as by serve).
 */
async function withServiceDb<T>(file: string, create: boolean, fn: (db: ServiceStore) => Promise<T>): Promise<T> {
  const { existsSync } = await import('node:fs');
  const { resolve } = await import('node:path');
  const { AgentError } = await import('../../core/errors.js');
  const { isPostgresUrl } = await import('../../server/store/store.js');
  if (!create && !isPostgresUrl(file) && !existsSync(file)) {
    throw new AgentError(
      'CLI_DB_MISSING',
      `there is no service database at ${resolve(file)}: nothing was created`,
      { file },
      {
        hint: 'give the file "edge-agent serve --db" uses; to start a new service database there, add --create',
      },
    );
  }
  const { openServiceDatabase } = await import('../../server/service.js');
  const db = await openServiceDatabase(file);
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

export default function register(program: Command): Command {
  const keys = defineCommand(program, {
    name: 'keys',
    summary: 'API keys of the attendance service: create, list, revoke',
    audience: 'site',
  });
  withVerbs(keys);

  const create = defineCommand(keys, {
    name: 'create',
    summary: 'create an API key in the service database (the service may be running)',
    details: `The secret is printed once and stored only as a scrypt hash: keep it somewhere safe.
Roles: admin may use every operation; admin-audit may read but not add, change or delete.
A --db that does not exist is refused (a typo would make a new database no service reads); --create
makes it.`,
  })
    .requiredOption(...DB_OPTION)
    .addOption(new Option('--role <role>', 'admin (every operation) or admin-audit (read only)').choices(ROLES).makeOptionMandatory())
    .option('--create', 'make the database when it does not exist yet');
  withJson(create, 'print {"apiKey", "apiSecret", "role"}');
  action<Values>(create, async (values) => {
    const { createApiKey } = await import('../../server/auth.js');
    const pair = await withServiceDb(values.db, values.create === true, (db) => createApiKey(db, values.role!));
    if (values.json) printJson({ apiKey: pair.apiKey, apiSecret: pair.apiSecret, role: pair.role });
    else
      process.stdout.write(
        `apiKey:    ${pair.apiKey}\napiSecret: ${pair.apiSecret}\nrole:      ${pair.role}\n(the secret is shown only now; it is stored hashed)\n`,
      );
    return 0;
  });

  const list = defineCommand(keys, {
    name: 'list',
    summary: 'the keys of the service database: key, role, created, tokens in use (never a secret)',
  }).requiredOption(...DB_OPTION);
  withJson(list, 'print {"keys": [{"apiKey", "role", "createdAt", "activeTokens"}]}');
  action<Values>(list, async (values) => {
    const { listApiKeys } = await import('../../server/auth.js');
    const rows = await withServiceDb(values.db, false, (db) => listApiKeys(db));
    if (values.json) printJson({ keys: rows });
    else if (rows.length === 0) process.stdout.write('no API keys (edge-agent keys create --db FILE --role admin makes one)\n');
    else
      for (const k of rows)
        process.stdout.write(`${k.apiKey}  ${k.role.padEnd(11)}  created ${k.createdAt}  ${k.activeTokens} token(s) in use\n`);
    return 0;
  });

  const revoke = defineCommand(keys, {
    name: 'revoke <apiKey>',
    summary: 'delete an API key and its tokens (asks first, or --yes)',
    details: `Clients using the key are refused from now on (a running service, every replica, within 5 s,
when it looks at a token it has cached again). Exit code 1 when there is no such key.`,
  })
    .requiredOption(...DB_OPTION)
    .option('--yes', 'do not ask');
  withJson(revoke, 'print {"revoked": apiKey}');
  action<Values>(revoke, async (values, args) => {
    const apiKey = args[0]!;
    const { AgentError } = await import('../../core/errors.js');
    const { revokeApiKey } = await import('../../server/auth.js');
    const { confirmed } = await import('../confirm.js');
    return withServiceDb(values.db, false, async (db) => {
      const { listApiKeys } = await import('../../server/auth.js');
      const key = (await listApiKeys(db)).find((k) => k.apiKey === apiKey);
      if (!key)
        throw new AgentError(
          'CLI_NOT_FOUND',
          `no API key ${apiKey} in ${db.where}: nothing revoked`,
          { apiKey },
          { hint: `"edge-agent keys list --db ${db.where}" shows the keys` },
        );
      if (
        !(await confirmed(
          `Revoke ${apiKey} (${key.role}, ${key.activeTokens} token(s) in use)? Its clients are refused from now on.`,
          values.yes,
          'keys revoke',
        ))
      ) {
        process.stdout.write('nothing revoked\n');
        return 1;
      }
      await revokeApiKey(db, apiKey);
      if (values.json) printJson({ revoked: apiKey });
      else process.stdout.write(`revoked ${apiKey} and its tokens\n`);
      return 0;
    });
  });
  return keys;
}
