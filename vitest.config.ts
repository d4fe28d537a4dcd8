import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: integration tests start real processes, brokers and PTYs.
    maxWorkers: 2,
    // The default reporter, and the skipped suites with their reasons (fidelity tiers).
    reporters: ['default', './test/helpers/tier-reporter.ts'],
    // Quiet logs, a temp folder per test file, and no process a test file starts (agent,
    // simulator, socat, broker) outlives the file.
    setupFiles: ['test/helpers/setup.ts'],
    // The run's id for the sandboxes, and a check of the temp folder at the end.
    globalSetup: ['test/helpers/global-setup.ts'],
  },
});
