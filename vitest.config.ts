import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Two cores: integration tests start real processes, brokers and PTYs.
    maxWorkers: 2,
    reporters: ['default'],
    // No process a test file starts (agent, simulator, socat, broker) outlives the file.
    setupFiles: ['test/helpers/leak-guard.ts'],
  },
});
