/** `edge-agent keys create --db FILE --role admin|admin-audit [--json]`: API keys of the attendance service. */
import { Option, type Command } from 'commander';
import { action, defineCommand, printJson, withJson, withVerbs } from '../command.js';
import { createApiKey, ROLES, type Role } from '../../server/auth.js';

type Values = { db: string; role: Role; json?: boolean };

export default function register(program: Command): Command {
  const keys = defineCommand(program, { name: 'keys', summary: 'create API keys of the attendance service', audience: 'site' });
  withVerbs(keys);

  const create = defineCommand(keys, {
    name: 'create',
    summary: 'create an API key in the service database (the service may be running)',
    details: `The secret is printed once and stored only as a scrypt hash: keep it somewhere safe.
Roles: admin may use every operation; admin-audit may read but not add, change or delete.`,
  })
    .requiredOption('--db <file>', "the attendance service's SQLite file (as for \"edge-agent serve --db\")")
    .addOption(new Option('--role <role>', 'admin (every operation) or admin-audit (read only)').choices(ROLES).makeOptionMandatory());
  withJson(create, 'print {"apiKey", "apiSecret", "role"}');
  action<Values>(create, async (values) => {
    const { openServiceDatabase } = await import('../../server/service.js');
    const db = await openServiceDatabase(values.db);
    try {
      const pair = await createApiKey(db, values.role);
      if (values.json) printJson({ apiKey: pair.apiKey, apiSecret: pair.apiSecret, role: pair.role });
      else process.stdout.write(`apiKey:    ${pair.apiKey}\napiSecret: ${pair.apiSecret}\nrole:      ${pair.role}\n(the secret is shown only now; it is stored hashed)\n`);
    } finally {
      await db.close();
    }
    return 0;
  });
  return keys;
}
