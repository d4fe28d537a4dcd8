import { describe, expect, it } from 'vitest';
import { logLevels, logger } from '../../../src/core/logger.js';
import { applyLogging } from '../../../src/config/logging.js';

describe('logging: the config applied to the logger', () => {
  it('applies the default level and per-module levels', () => {
    logger('test:a');
    logger('drivers:x');
    applyLogging({ level: 'warn', format: 'json', modules: { 'drivers:*': 'debug' } });
    const levels = logLevels();
    expect(levels['test:a']).toBe('warn');
    expect(levels['drivers:x']).toBe('debug');
  });
});
