import type { Command } from '../command.js';
import { parseCommandArgs, printJson } from '../args.js';
import { AgentError } from '../../core/errors.js';
import { createApiKey, isRole, ROLES } from '../../server/auth.js';
import { openServiceDatabase } from '../../server/service.js';

const usage = `usage: edge-agent keys create --db FILE --role admin|admin-audit [--json]
  Creates an API key of the attendance service in its database (the service may be running).
  The secret is printed once and stored only as a scrypt hash: keep it somewhere safe.
  Roles: admin may use every operation; admin-audit may read but not add, change or delete.
  --json prints {"apiKey": ..., "apiSecret": ..., "role": ...}.`;

const command: Command = {
  summary: 'create API keys of the attendance service',
  usage,
  async run(argv) {
    const { values, positionals } = parseCommandArgs(argv, { db: { type: 'string' }, role: { type: 'string' }, json: { type: 'boolean' } }, usage);
    if (positionals[0] !== 'create' || positionals.length !== 1) {
      throw new AgentError('CLI_USAGE', positionals[0] ? `unknown verb "${positionals.join(' ')}" for keys` : 'keys needs a verb: create', {}, { hint: usage });
    }
    if (!values.db) throw new AgentError('CLI_USAGE', 'keys create needs --db FILE (the service database)', {}, { hint: usage });
    if (!isRole(values.role)) throw new AgentError('CLI_USAGE', `--role must be one of ${ROLES.join(', ')}${values.role ? `, got "${values.role}"` : ''}`, {}, { hint: usage });
    const db = await openServiceDatabase(values.db);
    try {
      const pair = await createApiKey(db, values.role);
      if (values.json) printJson({ apiKey: pair.apiKey, apiSecret: pair.apiSecret, role: pair.role });
      else process.stdout.write(`apiKey:    ${pair.apiKey}\napiSecret: ${pair.apiSecret}\nrole:      ${pair.role}\n(the secret is shown only now; it is stored hashed)\n`);
    } finally {
      await db.close();
    }
    return 0;
  },
};
export default command;
